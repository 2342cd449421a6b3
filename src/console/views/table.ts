// The console's tables: a table on a wide screen; on a phone (console.css, table.cards) each row a
// card, each cell with its column's name beside it from `data-label`, so nothing scrolls sideways.
import { type Html, html } from '../html.js';

export interface Column {
  readonly label: string;
  /** Buttons, not a value: a quiet header, and on a phone the cell takes the card's whole width. */
  readonly actions?: boolean;
}

/** Rows of cells (Html, text or nothing), one per column, in the columns' order. */
export function dataTable(
  columns: readonly (string | Column)[],
  rows: readonly (readonly unknown[])[],
): Html {
  const cols = columns.map((c) => (typeof c === 'string' ? { label: c } : c));
  const head = cols.map(
    (c) => html`<th scope="col">${c.actions ? html`<span class="muted">${c.label}</span>` : c.label}</th>`,
  );
  const cell = (value: unknown, i: number) => {
    const content = html`${value}`;
    if (cols[i]!.actions) return html`<td class="actions">${content}</td>`;
    // An empty cell stays empty (:empty), so a phone's card leaves its line out.
    return html`<td data-label="${cols[i]!.label}">${content.text === '' ? '' : html`<div>${content}</div>`}</td>`;
  };
  return html`<div class="table-wrap"><table class="cards">
<thead><tr>${head}</tr></thead>
<tbody>${rows.map((row) => html`<tr>${row.map(cell)}</tr>`)}</tbody></table></div>`;
}
