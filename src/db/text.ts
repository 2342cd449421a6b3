declare global {
  interface String {
    /** ES2024; present in Node 20. Declared alone so the lib stays at what Node 20 fully has. */
    isWellFormed(): boolean;
  }
}

/**
 * Postgres text and jsonb cannot hold U+0000 or unpaired UTF-16 surrogates; a value carrying either
 * must be refused as invalid input rather than fail in the database.
 */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && value.isWellFormed();
}

export const UNSTORABLE_TEXT_MESSAGE = 'must not contain NUL characters or unpaired surrogates';
