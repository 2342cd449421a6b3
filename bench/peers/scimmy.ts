// SCIMMY with its Express routers as a bench peer: users and groups in Maps, served on PORT, the bench's
// bearer token (SCIM_TOKEN) under /scim/v2. The store pages inside the egress handler: SCIMMY turns every
// record a handler returns into a schema instance before it slices out the page asked for.
import { randomUUID } from 'node:crypto';
import express from 'express';
import SCIMMY from 'scimmy';
import SCIMMYRouters from 'scimmy-routers';

type Json = Record<string, unknown>;
/** What SCIMMY hands a handler: the resource asked for, with its id, filter and paging when given. */
type Asked = InstanceType<typeof SCIMMY.Types.Resource>;

const fail = (status: number, scimType: string | null, message: string) =>
  new SCIMMY.Types.Error(status, scimType as never, message);

/** Resources of one type by id, and by the attribute that must be unique among them (lower-cased). */
class Store {
  readonly byId = new Map<string, Json>();
  readonly byKey = new Map<string, string>();
  constructor(
    readonly type: string,
    readonly key: string,
  ) {}

  get(id: string): Json {
    const found = this.byId.get(id);
    if (!found) throw fail(404, null, `${this.type} ${id} not found`);
    return found;
  }

  /** A create (no id) or a replace, 409 when another resource holds the unique value. */
  save(id: string | undefined, instance: Json): Json {
    const key = String(instance[this.key]).toLowerCase();
    const holder = this.byKey.get(key);
    if (holder !== undefined && holder !== id)
      throw fail(409, 'uniqueness', `${this.key} ${String(instance[this.key])} is already taken`);
    const previous = id === undefined ? undefined : this.get(id);
    if (previous) this.byKey.delete(String(previous[this.key]).toLowerCase());
    const now = new Date().toISOString();
    // A plain copy: what SCIMMY coerced on the way in, without its schema instance's machinery.
    const record: Json = {
      ...(JSON.parse(JSON.stringify(instance)) as Json),
      id: id ?? randomUUID(),
      meta: { created: (previous?.meta as Json | undefined)?.created ?? now, lastModified: now },
    };
    this.byId.set(record.id as string, record);
    this.byKey.set(key, record.id as string);
    return record;
  }

  remove(id: string): Json {
    const record = this.get(id);
    this.byId.delete(id);
    this.byKey.delete(String(record[this.key]).toLowerCase());
    return record;
  }

  /**
   * One resource, or a page of those the filter matches: `key eq "…"` through the index, any other
   * filter by SCIMMY's own matching; totalResults handed to SCIMMY's list response through the
   * resource's constraints.
   */
  read(asked: Asked): Json | Json[] {
    if (asked.id !== undefined) return this.get(asked.id);
    const filter = asked.filter;
    let matched: Json[];
    const only = filter?.length === 1 ? Object.entries(filter[0] as Json) : [];
    const [attribute, expression] = only.length === 1 ? only[0]! : [];
    if (
      attribute?.toLowerCase() === this.key.toLowerCase() &&
      Array.isArray(expression) &&
      expression[0] === 'eq'
    ) {
      const id = this.byKey.get(String(expression[1]).toLowerCase());
      matched = id === undefined ? [] : [this.byId.get(id)!];
    } else {
      matched = filter ? filter.match([...this.byId.values()]) : [...this.byId.values()];
    }
    const startIndex = asked.constraints?.startIndex ?? 1;
    // SCIMMY's list response pages 20 when no count is asked for.
    const count = asked.constraints?.count ?? 20;
    asked.constraints = { ...asked.constraints, totalResults: matched.length } as Asked['constraints'];
    return matched.slice(startIndex - 1, startIndex - 1 + count);
  }
}

const users = new Store('User', 'userName');
const groups = new Store('Group', 'displayName');
/** The groups each user is in, so that a DELETE takes the user out of them. */
const memberOf = new Map<string, Set<string>>();

function setMembers(groupId: string, before: Json[] | undefined, after: Json[] | undefined): void {
  for (const m of before ?? []) memberOf.get(m.value as string)?.delete(groupId);
  for (const m of after ?? []) {
    const userId = m.value as string;
    const set = memberOf.get(userId) ?? new Set<string>();
    set.add(groupId);
    memberOf.set(userId, set);
  }
}

SCIMMY.Resources.declare(SCIMMY.Resources.User.extend(SCIMMY.Schemas.EnterpriseUser, false))
  .ingress((asked, instance) => users.save(asked.id, instance as unknown as Json) as never)
  .egress((asked) => users.read(asked) as never)
  .degress((asked) => {
    const id = asked.id!;
    users.remove(id);
    for (const groupId of memberOf.get(id) ?? []) {
      const group = groups.byId.get(groupId);
      if (group) group.members = (group.members as Json[]).filter((m) => m.value !== id);
    }
    memberOf.delete(id);
  });

SCIMMY.Resources.declare(SCIMMY.Resources.Group)
  .ingress((asked, instance) => {
    const members = (instance as unknown as Json).members as Json[] | undefined;
    for (const m of members ?? [])
      if (!users.byId.has(m.value as string))
        throw fail(400, 'invalidValue', `member ${String(m.value)} is not a user`);
    const before = asked.id === undefined ? undefined : (groups.get(asked.id).members as Json[] | undefined);
    const saved = groups.save(asked.id, instance as unknown as Json);
    setMembers(saved.id as string, before, members);
    return saved as never;
  })
  .egress((asked) => groups.read(asked) as never)
  .degress((asked) => {
    const removed = groups.remove(asked.id!);
    setMembers(asked.id!, removed.members as Json[] | undefined, undefined);
  });

const token = process.env.SCIM_TOKEN!;
const app = express();
app.get('/readyz', (_req, res) => {
  res.send('ready');
});
app.use(
  '/scim/v2',
  new SCIMMYRouters({
    type: 'bearer',
    handler: (req) => {
      if (req.headers.authorization !== `Bearer ${token}`) throw new Error('Bearer token not recognised');
      return 'bench';
    },
  }),
);
const server = app.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
