// The audit log's writer of entries apart from a change (src/audit/audit-log.ts): entries of an
// organization that arrive together share one INSERT, each caller learns when its own entry is
// stored, an entry that cannot be written goes to the process log, and an organization that is gone
// costs no one else's entry.
import { randomUUID } from 'node:crypto';
import type { KyselyPlugin } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit.js';
import { listAudit } from '../../src/audit/audit.repository.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { Database } from '../../src/db/database.js';
import { createOrg } from '../../src/orgs/orgs.service.js';
import { createTestDatabase } from '../helpers/database.js';

let database: Database;
let orgId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  orgId = (await createOrg(database.db, { name: 'Audit' })).id;
});
afterAll(() => database.close());

/** Statements one INSERT of the log carries at most (db/write-batches.ts). */
const MAX_AUDIT_BATCH = 100;

/** The log over a database handle that counts the statements it runs, and the lines it logs. */
function countedWriter() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const counter = { statements: 0 };
  const counting: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      counter.statements++;
      return args.result;
    },
  };
  return { writer: new AuditLog(database.db.withPlugin(counting), logger), counter, lines };
}

const entry = (org: string, requestId: string): AuditEntry => ({
  orgId: org,
  actor: 'token:t',
  action: 'user.create',
  resourceType: 'User',
  resourceId: randomUUID(),
  status: 201,
  requestId,
});

async function requestIds(): Promise<string[]> {
  const { events } = await listAudit(database.db, orgId, { limit: 1000 });
  return events.map((e) => e.requestId!).reverse();
}

describe('AuditLog', () => {
  it('writes entries that arrive together in one INSERT, in the order they arrived', async () => {
    const { writer, counter } = countedWriter();
    const ids = Array.from({ length: 30 }, (_, i) => `batch-${String(i).padStart(2, '0')}`);
    await Promise.all(ids.map((id) => writer.record(entry(orgId, id))));
    // The first is written at once; the other 29 arrive while it is in flight and go together.
    expect(counter.statements).toBe(2);
    expect((await requestIds()).filter((id) => id.startsWith('batch-'))).toEqual(ids);
  });

  it(`writes at most ${MAX_AUDIT_BATCH} entries in one INSERT`, async () => {
    const { writer, counter } = countedWriter();
    const count = MAX_AUDIT_BATCH * 2 + 1;
    await Promise.all(Array.from({ length: count }, (_, i) => writer.record(entry(orgId, `many-${i}`))));
    expect(counter.statements).toBe(3);
    expect((await requestIds()).filter((id) => id.startsWith('many-'))).toHaveLength(count);
  });

  it('drops the entry of an organization that is gone and still writes the rest of its batch', async () => {
    const { writer } = countedWriter();
    const results = await Promise.allSettled([
      writer.record(entry(orgId, 'gone-first')),
      writer.record(entry(orgId, 'gone-before')),
      writer.record(entry(randomUUID(), 'gone-missing')),
      writer.record(entry('not-a-uuid', 'gone-bad-id')),
      writer.record(entry(orgId, 'gone-after')),
    ]);
    expect(results.map((r) => r.status)).toEqual(Array(5).fill('fulfilled'));
    expect((await requestIds()).filter((id) => id.startsWith('gone-'))).toEqual([
      'gone-first',
      'gone-before',
      'gone-after',
    ]);
  });

  it('logs only the entry at fault when a batch cannot be written, and writes the rest of it', async () => {
    const { writer, lines } = countedWriter();
    const unwritable = { ...entry(orgId, 'fault-bad'), status: 2 ** 40 };
    const results = await Promise.allSettled([
      writer.record(entry(orgId, 'fault-first')),
      writer.record(entry(orgId, 'fault-before')),
      writer.record(unwritable),
      writer.record(entry(orgId, 'fault-after')),
    ]);
    expect(results.map((r) => r.status)).toEqual(Array(4).fill('fulfilled'));
    expect(lines).toMatchObject([{ msg: 'could not write an audit entry', requestId: 'fault-bad' }]);
    expect((await requestIds()).filter((id) => id.startsWith('fault-'))).toEqual([
      'fault-first',
      'fault-before',
      'fault-after',
    ]);
  });

  it('records a resource id that Postgres text cannot hold with the offending characters replaced', async () => {
    const { writer } = countedWriter();
    // A NUL from a decoded path, and a surrogate pair cut in half by the 200-character limit.
    const cut = `${'x'.repeat(199)}😀`;
    await writer.record({ ...entry(orgId, 'text-nul'), resourceId: 'a\u0000b' });
    await writer.record({ ...entry(orgId, 'text-cut'), resourceId: cut });
    const { events } = await listAudit(database.db, orgId, { limit: 1000 });
    const byRequest = new Map(events.map((e) => [e.requestId, e.resourceId]));
    expect(byRequest.get('text-nul')).toBe('a\uFFFDb');
    expect(byRequest.get('text-cut')).toBe(`${'x'.repeat(199)}\uFFFD`);
  });
});
