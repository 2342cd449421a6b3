// Counts, times and messages as the console's pages say them: "1 token", "2 tokens", "5 minutes
// ago", a server's message with its long tokens breakable.
import { type Html, html } from '../html.js';

/** A number with its noun, singular for exactly one: `count(1, 'user')` → "1 user". */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

const UNITS = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
] as const;

/** How long before `now` an instant was, in its largest whole unit: "just now", "1 hour ago". */
export function ago(at: string | Date, now: Date): string {
  const elapsed = now.getTime() - new Date(at).getTime();
  for (const [unit, ms] of UNITS) {
    if (elapsed >= ms) return `${count(Math.floor(elapsed / ms), unit)} ago`;
  }
  return 'just now';
}

/** A run without spaces this long is a token (an attribute's URN, a URL), not a word. */
const LONG_TOKEN = /\S{25,}/g;

/**
 * A message in which ids, URNs and URLs may break anywhere (class `long`), so a phone's width holds
 * them, while its words stay whole.
 */
export function withLongTokens(text: string): Html {
  const parts: Html[] = [];
  let last = 0;
  for (const match of text.matchAll(LONG_TOKEN)) {
    parts.push(html`${text.slice(last, match.index)}<span class="long">${match[0]}</span>`);
    last = match.index + match[0].length;
  }
  return html`${parts}${text.slice(last)}`;
}
