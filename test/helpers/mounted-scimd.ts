// createScimd on a database of its own (a scratch Postgres database, or PGlite in a temporary
// folder), for tests that mount scimd inside another app; close() ends it and removes its data.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScimd, type Scimd } from '../../src/server.js';
import { createScratchDatabase, onPostgres } from './database.js';

export async function createTestScimd(
  publicUrl: string,
  adminToken: string,
): Promise<{ scimd: Scimd; close: () => Promise<void> }> {
  const scratch = onPostgres ? await createScratchDatabase() : undefined;
  const dataDir = scratch ? undefined : await mkdtemp(join(tmpdir(), 'scimd-mounted-'));
  const scimd = await createScimd({
    publicUrl,
    adminToken,
    logLevel: 'silent',
    ...(scratch ? { database: scratch.url } : { dataDir: dataDir! }),
  });
  return {
    scimd,
    close: async () => {
      await scimd.close();
      await scratch?.drop();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
