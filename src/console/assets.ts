// The console's stylesheet, script and icons, and the operator's brand (its stylesheet and logo),
// read once and served with an ETag.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Context } from 'koa';
import { type Brand, brandStylesheet } from './brand.js';

// tsc does not copy these files: the built code reads them from the source tree.
const DIRECTORY = [
  new URL('./assets/', import.meta.url),
  new URL('../../../src/console/assets/', import.meta.url),
]
  .map((url) => fileURLToPath(url))
  .find((path) => existsSync(path));

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

function asset(body: Buffer, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` };
}

function load(name: string, type: string): Asset {
  if (!DIRECTORY) throw new Error('the console’s assets (src/console/assets) are missing');
  return asset(readFileSync(`${DIRECTORY}${name}`), type);
}

export function assetServer(brand: Brand): (ctx: Context, name: string) => boolean {
  const assets: Record<string, Asset> = {
    'console.css': load('console.css', 'text/css; charset=utf-8'),
    'console.js': load('console.js', 'text/javascript; charset=utf-8'),
    'icon.svg': load('icon.svg', 'image/svg+xml'),
    'directory.svg': load('directory.svg', 'image/svg+xml'),
    'brand.css': asset(Buffer.from(brandStylesheet(brand)), 'text/css; charset=utf-8'),
  };
  if (brand.logo) assets[brand.logo.file] = asset(brand.logo.body, brand.logo.type);
  return (ctx, name) => {
    const asset = assets[name];
    if (!asset) return false;
    ctx.set('ETag', asset.etag);
    ctx.set('Cache-Control', 'no-cache');
    if (ctx.get('if-none-match') === asset.etag) {
      ctx.status = 304;
      return true;
    }
    ctx.type = asset.type;
    ctx.body = asset.body;
    return true;
  };
}
