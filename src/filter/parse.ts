// The SCIM filter and PATCH-path parser: RFC 7644 §3.4.2.2 grammar, by recursive descent.
//
// It replaces scim2-parse-filter (see README, "Filters"): that parser decodes escapes other than \"
// wrongly, rejects `True` and negative numbers followed by more tokens, cannot parse PATCH paths,
// overflows the stack on deep nesting, and turns `emails[type eq "work"].value eq "x"` into an
// uncorrelated `and`. Each of those needed a tokenizer in front of it; this is that tokenizer plus
// the thirty lines of grammar it was missing.
import { InvalidFilterError, InvalidPathError } from '../http/scim-errors.js';
import { COMPARE_OPS, type CompareOp, type Filter, type FilterValue, type PathText } from './ast.js';

export const MAX_FILTER_LENGTH = 8192;
export const MAX_FILTER_DEPTH = 32;
/**
 * Comparisons (and `pr` tests) in one filter. An IdP's filters hold one to three; a search with
 * hundreds of substring tests costs the database hundreds of scans of the organization.
 */
export const MAX_FILTER_TERMS = 50;

type Token =
  | { readonly type: 'punct'; readonly value: '(' | ')' | '[' | ']'; readonly at: number }
  | { readonly type: 'string'; readonly value: string; readonly at: number }
  | { readonly type: 'word'; readonly value: string; readonly at: number };

class SyntaxFault extends Error {}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
    } else if (c === '(' || c === ')' || c === '[' || c === ']') {
      tokens.push({ type: 'punct', value: c, at: i });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw new SyntaxFault(`unterminated string starting at position ${i + 1}`);
      let value: string;
      try {
        // The RFC's string literal is a JSON string (RFC 7159 §7): JSON.parse decodes every escape.
        value = JSON.parse(text.slice(i, j + 1)) as string;
      } catch {
        throw new SyntaxFault(`invalid string literal at position ${i + 1}`);
      }
      tokens.push({ type: 'string', value, at: i });
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && !' \t\n\r()[]"'.includes(text[j]!)) j++;
      tokens.push({ type: 'word', value: text.slice(i, j), at: i });
      i = j;
    }
  }
  return tokens;
}

const ATTR_NAME = /^[A-Za-z$][\w$-]*$/;

/** Splits `urn:…:name.sub` (the URN ends at the last colon) and checks each name (RFC 7643 §2.1). */
function splitPath(text: string): PathText | undefined {
  let uri: string | undefined;
  let rest = text;
  if (text.toLowerCase().startsWith('urn:')) {
    const colon = text.lastIndexOf(':');
    uri = text.slice(0, colon);
    rest = text.slice(colon + 1);
  }
  const parts = rest.split('.');
  if (parts.length > 2 || !parts.every((p) => ATTR_NAME.test(p))) return undefined;
  return { ...(uri ? { uri } : {}), name: parts[0]!, ...(parts[1] ? { sub: parts[1] } : {}), text };
}

class Parser {
  private pos = 0;
  private depth = 0;
  private terms = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private where(token: Token | undefined): string {
    return token ? `"${token.value}" at position ${token.at + 1}` : 'the end';
  }

  private fail(expected: string, token = this.peek()): never {
    throw new SyntaxFault(`expected ${expected}, found ${this.where(token)}`);
  }

  private isWord(token: Token | undefined, ...words: string[]): boolean {
    return token?.type === 'word' && words.includes(token.value.toLowerCase());
  }

  private expectPunct(value: '(' | ')' | '[' | ']'): void {
    const token = this.peek();
    if (token?.type !== 'punct' || token.value !== value) this.fail(`"${value}"`);
    this.pos++;
  }

  private enter(): void {
    if (++this.depth > MAX_FILTER_DEPTH) {
      throw new SyntaxFault(`the filter nests deeper than ${MAX_FILTER_DEPTH} levels`);
    }
  }

  parseFilter(): Filter {
    const filter = this.parseOr(false);
    if (this.pos < this.tokens.length) this.fail('"and", "or" or the end');
    return filter;
  }

  private parseOr(inValuePath: boolean): Filter {
    const filters = [this.parseAnd(inValuePath)];
    while (this.isWord(this.peek(), 'or')) {
      this.pos++;
      filters.push(this.parseAnd(inValuePath));
    }
    return filters.length === 1 ? filters[0]! : { kind: 'or', filters };
  }

  private parseAnd(inValuePath: boolean): Filter {
    const filters = [this.parseUnary(inValuePath)];
    while (this.isWord(this.peek(), 'and')) {
      this.pos++;
      filters.push(this.parseUnary(inValuePath));
    }
    return filters.length === 1 ? filters[0]! : { kind: 'and', filters };
  }

  private parseUnary(inValuePath: boolean): Filter {
    const token = this.peek();
    if (this.isWord(token, 'not')) {
      this.pos++;
      this.enter();
      this.expectPunct('(');
      const inner = this.parseOr(inValuePath);
      this.expectPunct(')');
      this.depth--;
      return { kind: 'not', filter: inner };
    }
    if (token?.type === 'punct' && token.value === '(') {
      this.pos++;
      this.enter();
      const inner = this.parseOr(inValuePath);
      this.expectPunct(')');
      this.depth--;
      return inner;
    }
    return this.parseAttributeExpression(inValuePath);
  }

  private parsePathToken(): PathText {
    const token = this.peek();
    if (token?.type !== 'word') this.fail('an attribute name');
    const path = splitPath(token.value);
    if (!path) this.fail('an attribute name', token);
    this.pos++;
    return path;
  }

  private parseAttributeExpression(inValuePath: boolean): Filter {
    const path = this.parsePathToken();
    const next = this.peek();
    if (next?.type === 'punct' && next.value === '[') {
      if (inValuePath) throw new SyntaxFault(`value filters cannot nest, at position ${next.at + 1}`);
      if (path.sub) this.fail('an operator', next);
      this.pos++;
      this.enter();
      const inner = this.parseOr(true);
      this.expectPunct(']');
      this.depth--;
      const after = this.peek();
      // Entra sends `emails[type eq "work"].value eq "x"`: a comparison on a sub-attribute of the
      // element the bracket selects. It is kept correlated: one element must satisfy both.
      if (after?.type === 'word' && after.value.startsWith('.')) {
        const sub = after.value.slice(1);
        if (!ATTR_NAME.test(sub)) this.fail('a sub-attribute name', after);
        this.pos++;
        const subPath: PathText = { name: sub, text: sub };
        const tail = this.parseComparison(subPath);
        return { kind: 'valuePath', path, filter: { kind: 'and', filters: [inner, tail] } };
      }
      return { kind: 'valuePath', path, filter: inner };
    }
    return this.parseComparison(path);
  }

  private parseComparison(path: PathText): Filter {
    if (++this.terms > MAX_FILTER_TERMS) {
      throw new SyntaxFault(`the filter has more than ${MAX_FILTER_TERMS} comparisons; narrow it`);
    }
    const opToken = this.peek();
    if (opToken?.type !== 'word') this.fail(`an operator after ${path.text}`, opToken);
    const op = opToken.value.toLowerCase();
    this.pos++;
    if (op === 'pr') return { kind: 'present', path };
    if (!COMPARE_OPS.includes(op as CompareOp)) {
      this.fail(`an operator (eq, ne, co, sw, ew, gt, lt, ge, le, pr) after ${path.text}`, opToken);
    }
    const token = this.peek();
    const value = this.parseValue();
    // A number keeps its spelling, for when the attribute turns out to be a string.
    const bare = typeof value === 'number' ? token?.value : undefined;
    return { kind: 'compare', path, op: op as CompareOp, value, ...(bare !== undefined ? { bare } : {}) };
  }

  private parseValue(): FilterValue {
    const token = this.peek();
    if (!token || token.type === 'punct') this.fail('a value', token);
    this.pos++;
    if (token.type === 'string') return token.value;
    const word = token.value;
    if (word.startsWith("'")) {
      throw new SyntaxFault(`strings are written in double quotes, at position ${token.at + 1}`);
    }
    const lower = word.toLowerCase();
    // RFC 5234 literals are case-insensitive: True and TRUE are true.
    if (lower === 'true') return true;
    if (lower === 'false') return false;
    if (lower === 'null') return null;
    if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(word)) return Number(word);
    // Microsoft's material sends bare words (`externalId eq jyoung`, dates without quotes): a string.
    return word;
  }

  parsePatchPath(): { path: PathText; filter?: Filter; sub?: string } {
    const path = this.parsePathToken();
    const next = this.peek();
    if (!next) return { path };
    if (next.type !== 'punct' || next.value !== '[' || path.sub) this.fail('"[" or the end of the path');
    this.pos++;
    this.enter();
    const filter = this.parseOr(true);
    this.expectPunct(']');
    const after = this.peek();
    if (!after) return { path, filter };
    if (after.type !== 'word' || !after.value.startsWith('.') || !ATTR_NAME.test(after.value.slice(1))) {
      this.fail('".subAttribute" or the end of the path', after);
    }
    this.pos++;
    if (this.pos < this.tokens.length) this.fail('the end of the path');
    return { path, filter, sub: after.value.slice(1) };
  }
}

/** Parses a filter expression; any fault is a 400 invalidFilter that says where. */
export function parseFilter(text: string): Filter {
  if (text.length > MAX_FILTER_LENGTH) {
    throw new InvalidFilterError(`The filter is longer than ${MAX_FILTER_LENGTH} characters`);
  }
  if (text.trim() === '') throw new InvalidFilterError('The filter is empty');
  try {
    return new Parser(tokenize(text)).parseFilter();
  } catch (error) {
    if (error instanceof SyntaxFault) throw new InvalidFilterError(`Invalid filter: ${error.message}`);
    throw error;
  }
}

/** Parses a PATCH path (RFC 7644 §3.5.2): `attrPath`, `attrPath[valFilter]`, `attrPath[valFilter].sub`. */
export function parsePatchPath(text: string): { path: PathText; filter?: Filter; sub?: string } {
  if (text.length > MAX_FILTER_LENGTH) throw new InvalidPathError('The path is too long');
  try {
    const tokens = tokenize(text);
    // A path ending in `.sub` after `]` tokenizes as one word, which parsePatchPath expects.
    return new Parser(tokens).parsePatchPath();
  } catch (error) {
    if (error instanceof SyntaxFault) throw new InvalidPathError(`Invalid path "${text}": ${error.message}`);
    throw error;
  }
}
