// The operator's white label for the console (CONSOLE_BRAND_*): a name, a colour and a logo, read
// once at start; the logo and a stylesheet carrying the colour are served as the console's own assets,
// so the Content-Security-Policy stays 'self'.
import { readFileSync, statSync } from 'node:fs';

/** What config.ts read from the environment; the colour is already checked (#rgb or #rrggbb). */
export interface BrandSettings {
  readonly name: string | undefined;
  readonly color: string | undefined;
  readonly logoPath: string | undefined;
}

interface BrandLogo {
  /** Its name under /console/assets/: `logo.png`, `logo.svg`… */
  readonly file: string;
  readonly type: string;
  readonly body: Buffer;
  /** Width over height, for the space the operator's header keeps for it. */
  readonly aspect: number;
}

export interface Brand {
  readonly name: string | undefined;
  /** #rrggbb, lower case. */
  readonly color: string | undefined;
  readonly logo: BrandLogo | undefined;
}

export const NO_BRAND: Brand = { name: undefined, color: undefined, logo: undefined };

/** A logo is shown at most a few rem high: anything this large is a photograph or a mistake. */
const LOGO_MAX_BYTES = 256 * 1024;

/** Reads and checks the logo; throws a message naming the variable when it cannot be used. */
export function loadBrand(settings: BrandSettings): Brand {
  return {
    name: settings.name,
    color: settings.color && longHex(settings.color),
    logo: settings.logoPath === undefined ? undefined : readLogo(settings.logoPath),
  };
}

function readLogo(path: string): BrandLogo {
  let body: Buffer;
  try {
    const { size } = statSync(path);
    if (size > LOGO_MAX_BYTES)
      throw new Error(
        `is ${Math.ceil(size / 1024)} KiB; a logo may have at most ${LOGO_MAX_BYTES / 1024} KiB`,
      );
    body = readFileSync(path);
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ? 'cannot be read' : (error as Error).message;
    throw new Error(`CONSOLE_BRAND_LOGO ${path} ${why}`);
  }
  const image = recognise(body);
  if (!image)
    throw new Error(
      `CONSOLE_BRAND_LOGO ${path} is not an SVG, PNG, JPEG or WebP image (judged by its content)`,
    );
  return { file: `logo.${image.extension}`, type: image.type, body, aspect: image.aspect };
}

interface Recognised {
  readonly extension: string;
  readonly type: string;
  readonly aspect: number;
}

/** The image's format by its first bytes (never by the file's name), and its width over height. */
function recognise(body: Buffer): Recognised | undefined {
  const ascii = (from: number, to: number) => body.toString('latin1', from, to);
  if (body.length >= 24 && body.readUInt32BE(0) === 0x89504e47 && ascii(12, 16) === 'IHDR')
    return raster('png', 'image/png', body.readUInt32BE(16), body.readUInt32BE(20));
  if (body.length >= 30 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return webp(body);
  if (body.length >= 4 && body[0] === 0xff && body[1] === 0xd8 && body[2] === 0xff) return jpeg(body);
  return svg(body.toString('utf8'));
}

function raster(extension: string, type: string, width: number, height: number): Recognised | undefined {
  return width > 0 && height > 0 ? { extension, type, aspect: width / height } : undefined;
}

/** WebP's three kinds of first chunk each keep the canvas size in their own way. */
function webp(body: Buffer): Recognised | undefined {
  const kind = body.toString('latin1', 12, 16);
  if (kind === 'VP8X')
    return raster('webp', 'image/webp', body.readUIntLE(24, 3) + 1, body.readUIntLE(27, 3) + 1);
  if (kind === 'VP8 ')
    return raster('webp', 'image/webp', body.readUInt16LE(26) & 0x3fff, body.readUInt16LE(28) & 0x3fff);
  if (kind === 'VP8L') {
    const bits = body.readUInt32LE(21);
    return raster('webp', 'image/webp', (bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1);
  }
  return undefined;
}

/** A JPEG's size is in its start-of-frame segment, after any number of other segments. */
function jpeg(body: Buffer): Recognised | undefined {
  let at = 2;
  while (at + 9 < body.length && body[at] === 0xff) {
    const marker = body[at + 1]!;
    const startOfFrame =
      marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (startOfFrame)
      return raster('jpg', 'image/jpeg', body.readUInt16BE(at + 7), body.readUInt16BE(at + 5));
    at += 2 + body.readUInt16BE(at + 2);
  }
  return undefined;
}

/** An SVG document: an <svg> root after any XML declaration, comments or doctype; its viewBox or size. */
function svg(text: string): Recognised | undefined {
  const root = /^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*|<!--[\s\S]*?-->\s*|<!DOCTYPE[^>]*>\s*)*<svg\b([^>]*)>/i.exec(
    text,
  );
  if (!root) return undefined;
  const attributes = root[1]!;
  const attribute = (name: string) =>
    new RegExp(`\\b${name}\\s*=\\s*["']([^"']*)["']`, 'i').exec(attributes)?.[1];
  const box = attribute('viewBox')
    ?.trim()
    .split(/[\s,]+/)
    .map(Number);
  const [width, height] =
    box?.length === 4
      ? [box[2]!, box[3]!]
      : [Number.parseFloat(attribute('width') ?? ''), Number.parseFloat(attribute('height') ?? '')];
  // Without a size, a square: it is only the space the header keeps.
  const aspect = width! > 0 && height! > 0 ? width! / height! : 1;
  return { extension: 'svg', type: 'image/svg+xml', aspect };
}

/** #rgb as #rrggbb, lower case. */
function longHex(color: string): string {
  const hex = color.slice(1).toLowerCase();
  return `#${hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex}`;
}

/** WCAG 2's relative luminance of #rrggbb. */
function luminance(color: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(color.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

const contrast = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

/** The console's panel background (console.css --panel), the lightest a link or button sits on but paper. */
const PANEL_LUMINANCE = luminance('#f6f8fa');

/**
 * The stylesheet that carries the brand: its colour as --brand (with --brand-ink, black or white,
 * whichever reads better on it), and as --accent (links, buttons, focus) only when text in it keeps a
 * contrast of 4.5:1 on the console's backgrounds; and the space the operator's header keeps for the logo.
 */
export function brandStylesheet(brand: Brand): string {
  const rules = ['/* The operator’s brand (CONSOLE_BRAND_COLOR, CONSOLE_BRAND_LOGO), written at start. */'];
  if (brand.color) {
    const own = luminance(brand.color);
    const ink = contrast(own, 0) >= contrast(own, 1) ? '#000000' : '#ffffff';
    const readable = contrast(own, PANEL_LUMINANCE) >= 4.5;
    rules.push(
      `:root {\n  --brand: ${brand.color};\n  --brand-ink: ${ink};${readable ? `\n  --accent: ${brand.color};` : ''}\n}`,
    );
  }
  if (brand.logo) {
    const width = Math.min(Math.max(brand.logo.aspect, 0.5), 6) * 1.75;
    rules.push(
      `header.top .logo {\n  display: inline-block;\n  width: ${width.toFixed(2)}rem;\n  background-image: url("${brand.logo.file}");\n}`,
    );
  }
  return `${rules.join('\n')}\n`;
}
