// A User's roles and entitlements against its organization's catalogue: a value outside a catalogue
// that has entries is a 400 invalidValue naming the values allowed; while a catalogue is empty, any
// value is taken. Values compare in any case (RFC 7643 §4.1.2: `value` is not caseExact), as the
// catalogue keeps them unique.
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { InvalidValueError } from '../http/scim-errors.js';
import { isObject } from '../json.js';
import { type CatalogueKind, effectiveCatalogue } from './catalogue.repository.js';

const KINDS: readonly CatalogueKind[] = ['roles', 'entitlements'];

/** How many allowed values an error names before it says how many more there are. */
const NAMED_VALUES = 50;

type Attributes = Readonly<Record<string, unknown>>;

const lowered = (values: readonly string[]) => new Set(values.map((v) => v.toLowerCase()));

function valuesOf(attributes: Attributes | undefined, kind: CatalogueKind): string[] {
  const items = attributes?.[kind];
  if (!Array.isArray(items)) return [];
  return items.flatMap((item) => (isObject(item) && typeof item.value === 'string' ? [item.value] : []));
}

/**
 * Checks the values of `roles` and `entitlements` that `attributes` (validated, names as the schema
 * spells them) holds. A value outside the catalogue that the stored user already holds stays
 * acceptable when the catalogue has dropped it, so that a deactivation or a rename of that user still
 * goes through; such a value gives no role. `stored` is the stored user, or how to read it when a
 * value turns out to be outside. The catalogue is read only when a write brings a value: given the
 * stored user, only values it does not hold (a PATCH that adds the roles it has reads nothing more).
 */
export async function checkCatalogued(
  db: Kysely<DB>,
  orgId: string,
  attributes: Attributes,
  stored?: Attributes | (() => Promise<Attributes | undefined>),
): Promise<void> {
  const read = typeof stored === 'function' ? stored : undefined;
  const given = typeof stored === 'function' ? undefined : stored;
  let held: Promise<Attributes | undefined> | undefined;
  for (const kind of KINDS) {
    const known = lowered(valuesOf(given, kind));
    const carried = valuesOf(attributes, kind).filter((v) => !known.has(v.toLowerCase()));
    if (carried.length === 0) continue;
    const entries = await effectiveCatalogue(db, orgId, kind);
    if (entries.length === 0) continue;
    const allowed = new Set(entries.map((e) => e.value.toLowerCase()));
    let outside = [...new Set(carried.filter((v) => !allowed.has(v.toLowerCase())))];
    if (outside.length > 0 && read) {
      held ??= read();
      const kept = lowered(valuesOf(await held, kind));
      outside = outside.filter((v) => !kept.has(v.toLowerCase()));
    }
    if (outside.length === 0) continue;
    const named = entries.slice(0, NAMED_VALUES).map((e) => JSON.stringify(e.value));
    const more = entries.length > NAMED_VALUES ? ` and ${entries.length - NAMED_VALUES} more` : '';
    const endpoint = kind === 'roles' ? '/Roles' : '/Entitlements';
    throw new InvalidValueError(
      `${kind}: ${outside.map((v) => JSON.stringify(v)).join(', ')} ${outside.length === 1 ? 'is' : 'are'} not in this organization's catalogue (${endpoint} lists it); allowed: ${named.join(', ')}${more}`,
      'value_not_catalogued',
    );
  }
}
