// The package's version, read from its package.json (two folders up once compiled to dist/src).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function packageVersion(): string {
  for (const relative of ['../../package.json', '../package.json']) {
    const path = fileURLToPath(new URL(relative, import.meta.url));
    if (!existsSync(path)) continue;
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as { name?: string; version?: string };
    if (manifest.name === 'scimd' && manifest.version) return manifest.version;
  }
  return 'unknown';
}
