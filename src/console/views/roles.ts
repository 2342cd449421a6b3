// Roles in the console: the operator's page of an organization's catalogue, mappings and a user's
// effective roles, and the setup link's step where the customer's IT admin maps their groups to the
// product's roles. Both edit the whole mapping set with one form (mappingForm), which every group
// already mapped is part of, so a search or the bounded list of groups never drops a mapping.
import type { CatalogueEntry } from '../../roles/catalogue.repository.js';
import type { FoundUser, GroupChoice } from '../../roles/mapping-choices.repository.js';
import type { EffectiveValue, MappedGroup, RoleMappings } from '../../roles/roles.repository.js';
import type { Brand } from '../brand.js';
import { type Html, html } from '../html.js';
import { csrfField, notice, page } from './layout.js';
import { operatorNav } from './operator.js';
import { setupMasthead, setupNav } from './setup.js';
import { dataTable } from './table.js';
import { count } from './words.js';

type Entry = Omit<CatalogueEntry, 'id'>;

/** Empty rows for groups named before they arrive. */
const BLANK_NAME_ROWS = 3;

/** The last field of the mapping form: a form without it was cut short on the way (too many fields). */
export const FORM_END = 'complete';

export interface MappingFormData {
  readonly csrf: string;
  /** Where the form posts, and where the search of groups goes. */
  readonly path: string;
  readonly roles: readonly Entry[];
  readonly mappings: RoleMappings;
  /** The groups listed to choose from (bounded), and whether there are more. */
  readonly groups: readonly GroupChoice[];
  readonly more: boolean;
  readonly search: string;
  /** Mapped groups' names by id. */
  readonly names: ReadonlyMap<string, string>;
  readonly groupSync: boolean;
  /** The IT admin sees roles by their names only; the operator by name and value. */
  readonly audience: 'operator' | 'setup';
}

const roleLabel = (role: Entry, audience: MappingFormData['audience']) =>
  audience === 'setup' || role.displayName === role.value
    ? role.displayName
    : `${role.displayName} (${role.value})`;

function roleSelect(
  data: MappingFormData,
  name: string,
  label: string,
  current: string | null,
  none: string,
): Html {
  const lowered = current?.toLowerCase();
  return html`<select name="${name}" aria-label="${label}">
<option value="">${none}</option>
${data.roles.map(
  (r) =>
    html`<option value="${r.value}"${r.value.toLowerCase() === lowered ? html` selected` : ''}>${roleLabel(r, data.audience)}</option>`,
)}</select>`;
}

const byId = (g: MappedGroup): g is { id: string } => 'id' in g;

/** The search of the groups listed: a form of its own, before the mapping form (forms do not nest). */
function groupSearch(data: MappingFormData): Html {
  return html`<form class="row" method="get" action="${data.path}" role="search">
<label>Find a group <input type="search" name="q" value="${data.search}" maxlength="200"></label>
<button class="secondary">Search</button>${data.search ? html` <a href="${data.path}">Show all groups</a>` : ''}
</form>`;
}

function mappingForm(data: MappingFormData): Html {
  const { mappings } = data;
  const idMappings = mappings.mappings.filter((m) => byId(m.group));
  const mappedIds = new Set(idMappings.map((m) => (m.group as { id: string }).id));
  const names = new Map([...data.groups.map((g) => [g.id, g.displayName] as const), ...data.names]);
  const namedLowered = new Set(
    mappings.mappings.flatMap((m) => ('displayName' in m.group ? [m.group.displayName.toLowerCase()] : [])),
  );
  const groupRow = (id: string, role: string | null) => {
    const name = names.get(id) ?? id;
    const alsoByName = namedLowered.has(name.toLowerCase())
      ? html`<br><span class="muted">also mapped by its name, below</span>`
      : '';
    return [
      names.has(id) ? html`${name}${alsoByName}` : html`<code>${id}</code>`,
      roleSelect(data, `group:${id}`, `Role for ${name}`, role, 'No role'),
    ];
  };
  const rows = [
    ...idMappings.map((m) => groupRow((m.group as { id: string }).id, m.role)),
    ...data.groups.filter((g) => !mappedIds.has(g.id)).map((g) => groupRow(g.id, null)),
  ];
  const named = mappings.mappings.filter((m) => !byId(m.group)) as {
    group: { displayName: string };
    role: string;
  }[];
  const nameRows = [
    ...named.map((m) => ({ name: m.group.displayName, role: m.role as string | null })),
    ...Array.from({ length: BLANK_NAME_ROWS }, () => ({ name: '', role: null })),
  ];
  const listed = data.groups.length;
  const shown = data.search
    ? `${count(listed, 'group')} whose name contains “${data.search}”${data.more ? ' (the first of more: search for more of the name)' : ''}.`
    : data.more
      ? `The first ${listed} groups by name: search to find the others.`
      : listed === 0
        ? ''
        : `${count(listed, 'group')}, by name.`;
  const mode = (value: 'multiple' | 'single', label: string) =>
    html`<label class="check"><input type="radio" name="mode" value="${value}"${mappings.mode === value ? html` checked` : ''}> ${label}</label>`;
  return html`${data.groupSync ? '' : notice('warn', 'Group sync is off for this organization: no group arrives, so no group mapping applies until it is turned on; the default role does.')}
<h3>Groups that arrived</h3>
${groupSearch(data)}
<form class="stack wide" method="post" action="${data.path}">${csrfField(data.csrf)}
${
  rows.length === 0
    ? html`<p class="muted">${data.search ? `No group’s name contains “${data.search}”.` : 'No group has arrived yet: name groups below, and their mappings apply when they arrive.'}</p>`
    : html`${shown ? html`<p class="muted">${shown}${idMappings.length > 0 ? ' Mapped groups come first.' : ''}</p>` : ''}
${dataTable(['Group', 'Role'], rows)}`
}
<h3>Groups by name</h3>
<p class="muted">A group named here gets its role when it arrives, and keeps it while its name stays the same (in any case).</p>
${dataTable(
  ['Group name', 'Role'],
  nameRows.map((r, i) => [
    html`<input name="name:${i}" value="${r.name}" maxlength="1000" aria-label="Group name ${i + 1}">`,
    roleSelect(data, `nameRole:${i}`, `Role for group name ${i + 1}`, r.role, 'No role'),
  ]),
)}
<h3>Everyone else</h3>
<label>Default role, for people whose groups give them none
${roleSelect(data, 'defaultRole', 'Default role', mappings.defaultRole, 'No role')}</label>
<fieldset><legend>People in several mapped groups get</legend>
${mode('multiple', 'every role their groups give')}
${mode('single', data.audience === 'setup' ? 'one role: the highest-ranked of those their groups give (roles are listed highest first)' : 'one role: the one of the highest priority')}
</fieldset>
<input type="hidden" name="${FORM_END}" value="true">
<div><button>Save mappings</button></div>
</form>`;
}

export interface RolesPageData extends MappingFormData {
  readonly orgId: string;
  readonly orgName: string;
  readonly entitlements: readonly Entry[];
  readonly notice?: { readonly tone: 'ok' | 'bad'; readonly text: string };
  /** A user looked up, with its effective roles and entitlements; or the text that found none. */
  readonly lookup?:
    | {
        readonly text: string;
        readonly user: FoundUser;
        readonly roles: readonly EffectiveValue[];
        readonly entitlements: readonly EffectiveValue[];
      }
    | { readonly text: string; readonly user?: undefined };
}

const scopeOf = (e: Entry) => (e.scope === 'environment' ? 'every organization' : 'this organization');

function catalogueTable(kind: 'Role' | 'Entitlement', entries: readonly Entry[]): Html {
  if (entries.length === 0) return html`<p class="muted">None.</p>`;
  const priority = kind === 'Role';
  return dataTable(
    [kind, 'Value', ...(priority ? ['Priority'] : []), 'For', 'Description'],
    entries.map((e) => [
      e.displayName,
      html`<code>${e.value}</code>`,
      ...(priority ? [e.priority ?? 0] : []),
      scopeOf(e),
      e.description,
    ]),
  );
}

/** A source of an effective value in words: the IdP's attribute, a mapped group, the default role. */
function sourceText(source: string, names: ReadonlyMap<string, string>): Html {
  if (source === 'idp') return html`the identity provider`;
  if (source === 'default') return html`the default role`;
  const id = source.startsWith('group:') ? source.slice('group:'.length) : '';
  const name = names.get(id);
  return name ? html`group “${name}”` : html`<code>${source}</code>`;
}

function effectiveTable(kind: string, values: readonly EffectiveValue[], names: ReadonlyMap<string, string>) {
  if (values.length === 0) return html`<p class="muted">No ${kind.toLowerCase()}.</p>`;
  return dataTable(
    [kind, 'From'],
    values.map((v) => [
      html`<code>${v.value}</code>`,
      html`${v.sources.map((s, i) => html`${i > 0 ? ', ' : ''}${sourceText(s, names)}`)}`,
    ]),
  );
}

function lookupResult(data: RolesPageData): Html {
  const { lookup } = data;
  if (!lookup) return html``;
  if (!lookup.user)
    return notice('bad', `No user of this organization has the id or userName “${lookup.text}”.`);
  const { user } = lookup;
  return html`<p><strong>${user.displayName ?? user.userName}</strong> <code>${user.userName}</code>
${user.active ? '' : html`<span class="badge none">Inactive</span>`} <span class="muted">id <code>${user.id}</code></span></p>
${user.active ? '' : html`<p class="muted">An inactive user has no roles.</p>`}
${effectiveTable('Role', lookup.roles, data.names)}
${effectiveTable('Entitlement', lookup.entitlements, data.names)}`;
}

export function operatorRolesPage(data: RolesPageData): string {
  const base = `/console/orgs/${data.orgId}`;
  return page({
    title: `Roles of ${data.orgName}`,
    nav: operatorNav(data.csrf),
    body: html`<h1>Roles of ${data.orgName}</h1>
<p class="lead"><a href="${base}">Back to ${data.orgName}</a></p>
${data.notice ? notice(data.notice.tone, data.notice.text) : ''}
<h2 id="catalogue">Catalogue</h2>
<p class="muted">Change it with <code>scimd roles set FILE</code>, or <code>PUT /admin/v1/roles</code> (every organization’s)
and <code>PUT /admin/v1/orgs/${data.orgId}/roles</code> (this one’s own).</p>
${catalogueTable('Role', data.roles)}
<h3>Entitlements</h3>
${catalogueTable('Entitlement', data.entitlements)}
<h2 id="mappings">Group mappings</h2>
${
  data.roles.length === 0
    ? html`<p class="muted">The catalogue has no role yet: there is nothing to map groups to.</p>`
    : html`<p>People get the role of each mapped group they are a direct member of, and the roles their identity
provider gives them; the default role only when nothing else gives one. The customer’s IT admin can do this
too, from a setup link.</p>
${mappingForm(data)}`
}
<h2 id="user-roles">A user’s roles</h2>
<form class="row" method="get" action="${base}/roles#user-roles">
<label>User id or userName <input name="user" value="${data.lookup?.text ?? ''}" maxlength="1000" required></label>
<button class="secondary">Look up</button>
</form>
${lookupResult(data)}`,
  });
}

export interface SetupRolesPageData extends MappingFormData {
  readonly brand: Brand;
  readonly orgName: string;
  readonly notice?: { readonly tone: 'ok' | 'bad'; readonly text: string };
}

export function setupRolesPage(data: SetupRolesPageData): string {
  const ranked = [...data.roles].sort(
    (a, b) => (b.priority ?? 0) - (a.priority ?? 0) || a.displayName.localeCompare(b.displayName),
  );
  return page({
    title: 'Map your groups to roles',
    masthead: setupMasthead(data.brand, true),
    nav: setupNav(data.orgName, true),
    body: html`<h1>Map your groups to roles</h1>
<p class="lead">Choose the role people get in ${data.orgName} from the groups you assign in your identity
provider. Changes apply to everyone at once, and to people and groups as they arrive.</p>
${data.notice ? notice(data.notice.tone, data.notice.text) : ''}
<h2>Roles</h2>
${dataTable(
  ['Role', 'What it allows'],
  ranked.map((r) => [html`<strong>${r.displayName}</strong>`, r.description]),
)}
<h2>Your groups</h2>
${mappingForm({ ...data, roles: ranked })}`,
  });
}
