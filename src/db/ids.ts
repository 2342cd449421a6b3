const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else names nothing (and must not reach Postgres as a failed uuid cast). */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}
