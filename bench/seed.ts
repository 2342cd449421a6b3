// Seeds a benchmark organization straight into the database: users with realistic attributes,
// spare users for writes, a 100,000-member group, a 10-member group and an empty one, a catalogue of
// one role (mapped to a group only while a roles scenario runs, bench/roles.ts); and an
// organization for the writes that would change it, with users to delete. Between rounds,
// resetRound puts back what the round's writes changed, so that every round starts alike.
import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { putSchema } from '../src/custom-schemas/schemas.service.js';
import type { DB } from '../src/db/tables.js';
import { createOrg } from '../src/orgs/orgs.service.js';
import { createToken } from '../src/orgs/tokens.service.js';
import { recountOrg } from '../src/resources/counts.repository.js';
import { replaceScopeCatalogue } from '../src/roles/catalogue.repository.js';

const FEED_TRIGGERS: readonly [string, string][] = [
  ['users', 'users_changes'],
  ['groups', 'groups_changes'],
  ['group_members', 'group_members_insert_changes'],
  ['group_members', 'group_members_delete_changes'],
];

/** Turns the triggers that write changes off or on (seeding and resets are not SCIM writes). */
export async function setFeedTriggers(db: Kysely<DB>, on: boolean): Promise<void> {
  for (const [table, trigger] of FEED_TRIGGERS) {
    await sql`alter table ${sql.id(table)} ${sql.raw(on ? 'enable' : 'disable')} trigger ${sql.id(trigger)}`.execute(
      db,
    );
  }
}

export interface Seeded {
  orgId: string;
  token: string;
  /** userName and id of every seeded user, in creation order. */
  users: { id: string; userName: string }[];
  /** Users in no group, for writes that add members. */
  spare: { id: string; userName: string }[];
  bigGroup: string;
  smallGroup: string;
  emptyGroup: string;
  /**
   * An organization of its own for writes that would change the measured one: POST /Users,
   * POST /Groups, and DELETE of its `doomed` users.
   */
  scratch: { orgId: string; token: string; doomed: string[] };
  /**
   * An organization with a schema of its own (CUSTOM_SCHEMA), whose `size` users carry
   * `costCenter` `CC-<n>` besides the attributes every seeded user has.
   */
  custom: { orgId: string; token: string; size: number };
}

/** The measured organization's one catalogued role, which bench/roles.ts maps its big group to. */
export const BENCH_ROLE = 'member';

/** The custom organization's schema extension. */
export const CUSTOM_SCHEMA = 'urn:ietf:params:scim:schemas:extension:bench:2.0:User';

/**
 * The attributes of the n-th user named `userName`, as Okta or Entra provision one: what the seeded
 * users have (insertUsers writes the same in SQL), and what POST and PUT send.
 */
export function userAttributes(n: number, userName: string): Record<string, unknown> {
  const displayName = `Given${n} Family${n}`;
  return {
    userName,
    externalId: `00u${String(n).padStart(9, '0')}`,
    name: { givenName: `Given${n}`, familyName: `Family${n}`, formatted: displayName },
    displayName,
    title: `Engineer ${n % 7}`,
    active: true,
    emails: [{ type: 'work', value: userName, primary: true }],
    phoneNumbers: [{ type: 'work', value: `+1 555 ${String(n).padStart(7, '0')}` }],
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': {
      department: `Dept ${n % 40}`,
      employeeNumber: String(n),
    },
  };
}

/**
 * `count` users with userAttributes, `<prefix><n>@corp.example`, created 1 ms apart; with `custom`,
 * also `costCenter` `CC-<n>` under CUSTOM_SCHEMA.
 */
async function insertUsers(
  db: Kysely<DB>,
  orgId: string,
  prefix: string,
  count: number,
  custom = false,
): Promise<void> {
  await sql`
    insert into users (org_id, id, user_name, external_id, display_name, active, data, created_at, updated_at)
    select ${orgId}::uuid, gen_random_uuid(), u.user_name, '00u' || lpad(i::text, 9, '0'), u.display_name, true,
      jsonb_build_object(
        'userName', u.user_name,
        'externalId', '00u' || lpad(i::text, 9, '0'),
        'name', jsonb_build_object('givenName', 'Given' || i, 'familyName', 'Family' || i, 'formatted', u.display_name),
        'displayName', u.display_name,
        'title', 'Engineer ' || (i % 7),
        'active', true,
        'emails', jsonb_build_array(jsonb_build_object('type', 'work', 'value', u.user_name, 'primary', true)),
        'phoneNumbers', jsonb_build_array(jsonb_build_object('type', 'work', 'value', '+1 555 ' || lpad(i::text, 7, '0'))),
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
          jsonb_build_object('department', 'Dept ' || (i % 40), 'employeeNumber', i::text))
        || ${custom ? sql`jsonb_build_object(${CUSTOM_SCHEMA}::text, jsonb_build_object('costCenter', 'CC-' || i))` : sql`'{}'::jsonb`},
      -- Distinct creation times, one millisecond apart, in seeding order.
      timestamptz '2026-01-01' + (i || ' milliseconds')::interval, now()
    from generate_series(1, ${count}) as i,
      lateral (select ${prefix}::text || i || '@corp.example' as user_name, 'Given' || i || ' Family' || i as display_name) as u
  `.execute(db);
}

export async function seed(db: Kysely<DB>, size: number, spare: number, doomed: number): Promise<Seeded> {
  // Seeding is not a SCIM write: it writes no changes (bench/feed.ts writes its own).
  await setFeedTriggers(db, false);
  const org = await createOrg(db, { name: 'bench', groupSync: true });
  const { secret } = await createToken(db, org.id, { name: 'bench' });
  await insertUsers(db, org.id, 'user', size + spare);
  const rows = await db
    .selectFrom('users')
    .select(['id', 'user_name'])
    .where('org_id', '=', org.id)
    .orderBy('created_at')
    .execute();
  const all = rows.map((r) => ({ id: r.id, userName: r.user_name }));
  const group = async (name: string) => {
    const id = randomUUID();
    const now = new Date();
    await db
      .insertInto('groups')
      .values({
        org_id: org.id,
        id,
        display_name: name,
        external_id: null,
        data: JSON.stringify({ displayName: name }),
        created_at: now,
        updated_at: now,
      })
      .execute();
    return id;
  };
  const bigGroup = await group('Everyone');
  const smallGroup = await group('Ten');
  const emptyGroup = await group('Nobody');
  await sql`insert into group_members (org_id, group_id, user_id, created_at)
            select org_id, ${bigGroup}::uuid, id, now() from users
            where org_id = ${org.id}::uuid order by created_at limit ${size}`.execute(db);
  await sql`insert into group_members (org_id, group_id, user_id, created_at)
            select org_id, ${smallGroup}::uuid, id, now() from users
            where org_id = ${org.id}::uuid order by created_at limit 10`.execute(db);
  // Written straight into the tables: the organization's counts are taken from them once.
  await recountOrg(db, org.id);
  // No user carries roles and nothing is mapped: every user's effective roles stay none, as
  // user_roles has them, so the catalogue is written without the recomputation the admin API runs.
  await replaceScopeCatalogue(
    db,
    org.id,
    'roles',
    [{ value: BENCH_ROLE, displayName: 'Member', description: '', priority: 0 }],
    new Date(),
  );
  const scratchOrg = await createOrg(db, { name: 'bench writes', groupSync: true });
  await insertUsers(db, scratchOrg.id, 'doomed', doomed);
  await recountOrg(db, scratchOrg.id);
  const doomedIds = await db.selectFrom('users').select('id').where('org_id', '=', scratchOrg.id).execute();
  const scratch = {
    orgId: scratchOrg.id,
    token: (await createToken(db, scratchOrg.id, { name: 'bench' })).secret,
    doomed: doomedIds.map((r) => r.id),
  };
  const customOrg = await createOrg(db, { name: 'bench custom attributes' });
  await putSchema(db, customOrg.id, CUSTOM_SCHEMA, {
    id: CUSTOM_SCHEMA,
    attributes: [{ name: 'costCenter', type: 'string' }],
  });
  await insertUsers(db, customOrg.id, 'custom', size, true);
  await recountOrg(db, customOrg.id);
  const custom = {
    orgId: customOrg.id,
    token: (await createToken(db, customOrg.id, { name: 'bench' })).secret,
    size,
  };
  await setFeedTriggers(db, true);
  // Vacuum too: the first scenario should not pay for setting hint bits on 100k fresh rows.
  await sql`vacuum analyze`.execute(db);
  return {
    orgId: org.id,
    token: secret,
    users: all.slice(0, size),
    spare: all.slice(size),
    bigGroup,
    smallGroup,
    emptyGroup,
    scratch,
    custom,
  };
}

/**
 * Undoes what a round's writes added or removed: the users POST created (userNames `new-…`), the
 * members added to the groups, the groups and deletions of the writes organization; drops both
 * organizations' audit entries and the round's changes; recounts; vacuums. Updates (PATCH, PUT)
 * stay: they change no count.
 */
export async function resetRound(db: Kysely<DB>, seeded: Seeded): Promise<void> {
  const { orgId, scratch } = seeded;
  await setFeedTriggers(db, false);
  await sql`delete from users where org_id = ${scratch.orgId} and user_name like 'new-%'`.execute(db);
  await sql`delete from group_members where org_id = ${orgId}
            and user_id = any(${seeded.spare.map((u) => u.id)}::uuid[])`.execute(db);
  await sql`delete from groups where org_id = ${scratch.orgId}`.execute(db);
  await sql`update users set deprovisioned_at = null, active = true, data = jsonb_set(data, '{active}', 'true')
            where org_id = ${scratch.orgId} and deprovisioned_at is not null`.execute(db);
  await sql`delete from audit_events where org_id in (${orgId}, ${scratch.orgId})`.execute(db);
  await sql`truncate changes`.execute(db);
  await setFeedTriggers(db, true);
  await recountOrg(db, orgId);
  await recountOrg(db, scratch.orgId);
  await sql`vacuum analyze users, groups, group_members, audit_events, org_counts, changes`.execute(db);
}
