// A query string as Koa parses it. A parameter given twice arrives as an array; scimd reads the first.
export type Query = Record<string, string | string[] | undefined>;

export function queryValue(query: Query, name: string): string | undefined {
  const value = query[name];
  return Array.isArray(value) ? value[0] : value;
}
