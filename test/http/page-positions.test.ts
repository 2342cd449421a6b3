// Index pages of an unfiltered list continue from where a page earlier ended when nothing was created
// or removed since (src/resources/page-positions.ts): whatever the order of requests and the writes
// between them, each page is the one OFFSET would give.
import { expect, it } from 'vitest';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { USER } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

let seq = 0;
const create = async (t: Tenant) =>
  (await t.post('/Users', { schemas: [USER], userName: `paged-${++seq}@corp.example` }).expect(201)).body
    .id as string;

const ids = async (t: Tenant, query: string) =>
  ((await t.get(`/Users?attributes=id&${query}`).expect(200)).body.Resources as { id: string }[]).map(
    (r) => r.id,
  );

/** Every user's id in the list's order, read as one page. */
const everyone = (t: Tenant) => ids(t, 'count=1000');

it("walks the list by startIndex as Okta's import does: every user once, in order", async () => {
  const t = await harness.tenant();
  for (let i = 0; i < 45; i++) await create(t);
  const all = await everyone(t);
  const walked: string[] = [];
  for (let start = 1; start <= all.length; start += 10)
    walked.push(...(await ids(t, `startIndex=${start}&count=10`)));
  expect(walked).toEqual(all);
  // The same walk again, and the pages asked out of order and twice.
  for (const start of [31, 11, 31, 41, 1, 21, 41, 2, 44, 46]) {
    expect(await ids(t, `startIndex=${start}&count=10`), `startIndex ${start}`).toEqual(
      all.slice(start - 1, start + 9),
    );
  }
});

it('gives the page OFFSET would after creates and deletes between the pages', async () => {
  const t = await harness.tenant();
  const created: string[] = [];
  for (let i = 0; i < 40; i++) created.push(await create(t));
  let random = 7;
  const next = (n: number) => {
    random = (random * 1103515245 + 12345) % 2 ** 31;
    return random % n;
  };
  for (let step = 0; step < 30; step++) {
    const start = 1 + next(45);
    const count = 1 + next(12);
    // Read the same page twice, so the second may continue from a remembered position.
    await ids(t, `startIndex=${start}&count=${count}`);
    const page = await ids(t, `startIndex=${start}&count=${count}`);
    expect(page, `step ${step}: startIndex ${start}, count ${count}`).toEqual(
      (await everyone(t)).slice(start - 1, start - 1 + count),
    );
    const write = next(3);
    if (write === 0) created.push(await create(t));
    if (write === 1 && created.length > 0)
      await t.delete(`/Users/${created.splice(next(created.length), 1)[0]}`).expect(204);
  }
});

it('keeps the order of a list with sortBy or a filter to OFFSET', async () => {
  const t = await harness.tenant();
  for (let i = 0; i < 12; i++) await create(t);
  const byName = await ids(t, 'sortBy=userName&sortOrder=descending&count=100');
  expect(await ids(t, 'sortBy=userName&sortOrder=descending&startIndex=5&count=3')).toEqual(
    byName.slice(4, 7),
  );
  const filter = encodeURIComponent('userName sw "paged-"');
  const filtered = await ids(t, `filter=${filter}&count=100`);
  expect(await ids(t, `filter=${filter}&startIndex=4&count=5`)).toEqual(filtered.slice(3, 8));
});
