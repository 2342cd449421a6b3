// Checks a console journey makes on each page it visits, whoever's journey it is: axe-core finds no
// serious or critical accessibility violation, nothing scrolls sideways, and no word is broken
// across two lines (only ids, URLs and secrets may be).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AxeResults, Result } from 'axe-core';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The impacts that fail a page; minor and moderate findings are left to a person's review. */
const FAILING = new Set(['serious', 'critical']);

/** axe-core's serious and critical violations on the page as it is now (a dialog open included). */
export async function expectAccessible(page: Page): Promise<void> {
  // Evaluated through the DevTools protocol, which the console's Content-Security-Policy does not
  // govern: the page itself still runs no inline script.
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const results = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] })")) as AxeResults;
  const failing = results.violations.filter((v) => FAILING.has(v.impact ?? ''));
  expect(failing.map(readable).join('\n\n'), `accessibility of ${page.url()}`).toBe('');
}

/** One violation as a person reads it: the rule, what it asks, and each element with what is wrong. */
function readable(violation: Result): string {
  const nodes = violation.nodes.map(
    (n) =>
      `  ${n.target.join(' ')}\n    ${n.html.slice(0, 200)}\n    ${(n.failureSummary ?? '').replaceAll('\n', '\n    ')}`,
  );
  return `${violation.id} (${violation.impact}): ${violation.help}\n  ${violation.helpUrl}\n${nodes.join('\n')}`;
}

// The checks below run in the page: plain JavaScript, as text, so that nothing the test's compiler
// adds to a function reaches the browser.

/** A short CSS-like name of an element, for the messages. */
const NAME_OF = `(el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
  [...el.classList].map((c) => '.' + c).join('')`;

/**
 * What is wider than the window: the document itself (anything reaching past its right edge), or
 * a box of its own that scrolls sideways (a table in an overflow: auto wrapper).
 */
const WIDE = `(() => {
  const nameOf = ${NAME_OF};
  const root = document.scrollingElement;
  const width = root.clientWidth;
  const wide = [];
  if (root.scrollWidth > width) {
    wide.push('the page is ' + root.scrollWidth + ' px wide in a ' + width + ' px window');
    for (const el of document.body.querySelectorAll('*')) {
      const right = el.getBoundingClientRect().right;
      if (right > width + 0.5) wide.push(nameOf(el) + ' reaches ' + Math.round(right) + ' px');
    }
  }
  for (const el of document.body.querySelectorAll('*')) {
    const overflow = getComputedStyle(el).overflowX;
    if ((overflow === 'auto' || overflow === 'scroll') && el.scrollWidth > el.clientWidth + 1)
      wide.push(nameOf(el) + ' scrolls sideways: ' + el.scrollWidth + ' px in ' + el.clientWidth + ' px');
  }
  return wide.slice(0, 12);
})()`;

export async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const wide = (await page.evaluate(WIDE)) as string[];
  expect(wide, `sideways scrolling on ${page.url()}`).toEqual([]);
}

/**
 * The words laid out on two lines: a word (a run between spaces and hyphens) whose boxes sit on two
 * different lines. Text in code, inputs and .long (ids, URLs, secrets) may break anywhere.
 */
const BROKEN_WORDS = `(() => {
  const nameOf = ${NAME_OF};
  const mayBreak = 'code, .value, .long, pre, input, select, textarea, option, script, style, head';
  const broken = [];
  const range = document.createRange();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(mayBreak) || parent.getClientRects().length === 0) continue;
    for (const word of node.data.matchAll(/[^\\s\\-‐–—]+/g)) {
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      const lines = new Set(
        [...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)),
      );
      if (lines.size > 1) broken.push('"' + word[0] + '" in ' + nameOf(parent));
    }
  }
  return broken.slice(0, 12);
})()`;

export async function expectWholeWords(page: Page): Promise<void> {
  const broken = (await page.evaluate(BROKEN_WORDS)) as string[];
  expect(broken, `words broken across lines on ${page.url()}`).toEqual([]);
}
