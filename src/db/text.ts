declare global {
  interface String {
    // ES2024; present in Node 20. Declared one by one so the lib stays at what Node 20 fully has.
    isWellFormed(): boolean;
    toWellFormed(): string;
  }
}

/**
 * Postgres text and jsonb cannot hold U+0000 or unpaired UTF-16 surrogates; a value carrying either
 * must be refused as invalid input rather than fail in the database.
 */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && value.isWellFormed();
}

/** The text with each NUL and unpaired surrogate replaced by U+FFFD, for what is recorded rather than refused. */
export function storableText(value: string): string {
  return value.replaceAll('\u0000', '\uFFFD').toWellFormed();
}

export const UNSTORABLE_TEXT_MESSAGE = 'must not contain NUL characters or unpaired surrogates';

/**
 * Where in a parsed body or query the first text that cannot be stored is (a key or a string at any
 * depth): its path, `''` for the value itself; undefined when everything can be stored.
 */
export function unstorableAt(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : path;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, inner] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (!isStorableText(key)) return path || '(a key)';
    const found = unstorableAt(inner, at);
    if (found !== undefined) return found;
  }
  return undefined;
}
