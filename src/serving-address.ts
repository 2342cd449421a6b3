// Where a scimd on the embedded database serves, kept in DATA_DIR beside the admin token so that the
// CLI, run from the same folder, finds a scimd started with another PORT.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ADDRESS_FILE = 'serving-at';

export function writeServingAddress(dataDir: string, url: string): () => void {
  const path = join(dataDir, ADDRESS_FILE);
  writeFileSync(path, `${url}\n`, { mode: 0o600 });
  return () => {
    // Another scimd may have started on this folder since; its address stays.
    if (readServingAddress(dataDir) === url) rmSync(path, { force: true });
  };
}

/** The address a running scimd on this data folder wrote, if any. */
export function readServingAddress(dataDir: string): string | undefined {
  try {
    return readFileSync(join(dataDir, ADDRESS_FILE), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
