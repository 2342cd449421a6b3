// Roles in the console, from the roles service as the admin API's: the operator's page of an
// organization's catalogue, group mappings and a user's effective roles, and the setup link's step
// where the customer's IT admin maps their groups (limited to the link's organization, which the
// session carries). A form puts the whole mapping set, audited as the admin API's PUT; the service's
// refusal is shown on the page, above the form.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { AdminError, notFound } from '../http/admin-errors.js';
import * as admin from '../orgs/orgs.service.js';
import { findUserByIdOrName, groupChoices, groupNames } from '../roles/mapping-choices.repository.js';
import * as roles from '../roles/roles.service.js';
import type { ConsoleState, ConsoleTools } from './console-deps.js';
import { field, fields, seeOther, sendPage } from './respond.js';
import { FORM_END, type MappingFormData, operatorRolesPage, setupRolesPage } from './views/roles.js';

/** Groups listed to choose from; a search finds the others. */
const GROUPS_LISTED = 200;

type Notice = { tone: 'ok' | 'bad'; text: string };

const query = (ctx: Context, name: string) => String(ctx.query[name] ?? '').trim();

/** The body of PUT role-mappings from the form: a row per group and role, the default and the mode. */
function mappingsFromForm(ctx: Context) {
  if (field(ctx, FORM_END) !== 'true')
    throw new AdminError(
      400,
      'invalid_request',
      'The form arrived incomplete: reload the page and try again',
    );
  const body = (ctx.request.body ?? {}) as Record<string, unknown>;
  const mappings: { group: { id: string } | { displayName: string }; role: string }[] = [];
  const seen = new Set<string>();
  const add = (group: { id: string } | { displayName: string }, role: string) => {
    const key = JSON.stringify([
      'id' in group ? group.id : group.displayName.toLowerCase(),
      role.toLowerCase(),
    ]);
    if (!seen.has(key)) mappings.push({ group, role });
    seen.add(key);
  };
  for (const name of Object.keys(body)) {
    if (name.startsWith('group:')) {
      for (const role of fields(ctx, name).map((r) => r.trim())) if (role) add({ id: name.slice(6) }, role);
    } else if (name.startsWith('name:')) {
      const displayName = field(ctx, name);
      const role = field(ctx, `nameRole:${name.slice(5)}`);
      if (displayName && role) add({ displayName }, role);
      else if (role)
        throw new AdminError(
          400,
          'invalid_request',
          'A role is chosen for a group name left empty: name the group',
        );
    }
  }
  const mode = field(ctx, 'mode');
  return { mappings, defaultRole: field(ctx, 'defaultRole') || null, ...(mode ? { mode } : {}) };
}

/** A refusal the person can act on (the roles service's 400 or 409), shown on the page. */
const refusal = (error: unknown) =>
  error instanceof AdminError && (error.status === 400 || error.status === 409) ? error : undefined;

const NOTICES: Record<string, string> = { mappings: 'Mappings saved: people’s roles are up to date.' };

export function registerConsoleRoleRoutes(router: Router<ConsoleState>, tools: ConsoleTools): void {
  const { db, audited, brand } = tools;
  const csrf = (ctx: Context) => (ctx.state as ConsoleState).session.csrf;
  const orgIdOf = (ctx: Context) => (ctx.params as { orgId: string }).orgId;

  /** What the mapping form shows: the catalogue's roles, the mappings, and groups to choose from. */
  const formData = async (
    ctx: Context,
    orgId: string,
    path: string,
    audience: MappingFormData['audience'],
  ) => {
    const org = await admin.getOrg(db, orgId);
    const search = query(ctx, 'q').slice(0, 200);
    const [catalogue, entitlements, mappings, choices] = await Promise.all([
      roles.orgCatalogue(db, orgId, 'roles'),
      roles.orgCatalogue(db, orgId, 'entitlements'),
      roles.mappings(db, orgId),
      groupChoices(db, orgId, { search, limit: GROUPS_LISTED }),
    ]);
    const mappedIds = mappings.mappings.flatMap((m) => ('id' in m.group ? [m.group.id] : []));
    return {
      org,
      entitlements: entitlements.entitlements ?? [],
      form: {
        csrf: csrf(ctx),
        path,
        roles: catalogue.roles ?? [],
        mappings,
        groups: choices.groups,
        more: choices.more,
        search,
        names: await groupNames(db, orgId, mappedIds),
        groupSync: org.groupSync,
        audience,
      } satisfies MappingFormData,
    };
  };

  const showOperator = async (ctx: Context, orgId: string, notice?: Notice, status = 200) => {
    const path = `/console/orgs/${orgId}/roles`;
    const { org, entitlements, form } = await formData(ctx, orgId, path, 'operator');
    const text = query(ctx, 'user');
    let lookup: Parameters<typeof operatorRolesPage>[0]['lookup'];
    if (text) {
      const user = await findUserByIdOrName(db, orgId, text);
      if (user) {
        const access = await roles.userAccess(db, orgId, user.id);
        const sources = [...access.roles, ...access.entitlements].flatMap((v) => v.sources);
        const ids = sources.flatMap((s) => (s.startsWith('group:') ? [s.slice(6)] : []));
        const names = await groupNames(db, orgId, ids);
        form.names = new Map([...form.names, ...names]);
        lookup = { text, user, ...access };
      } else {
        lookup = { text };
        status = 404;
      }
    }
    const page = operatorRolesPage({
      ...form,
      orgId,
      orgName: org.name,
      entitlements,
      ...(notice ? { notice } : {}),
      ...(lookup ? { lookup } : {}),
    });
    sendPage(ctx, page, status);
  };

  router.get('/orgs/:orgId/roles', async (ctx) => {
    const done = NOTICES[query(ctx, 'done')];
    await showOperator(ctx, orgIdOf(ctx), done ? { tone: 'ok', text: done } : undefined);
  });

  router.post('/orgs/:orgId/roles', audited('role_mappings.put'), async (ctx) => {
    const orgId = orgIdOf(ctx);
    try {
      await roles.putMappings(db, orgId, mappingsFromForm(ctx));
    } catch (error) {
      const refused = refusal(error);
      if (!refused) throw error;
      return showOperator(ctx, orgId, { tone: 'bad', text: `Not saved: ${refused.message}` }, refused.status);
    }
    seeOther(ctx, `/console/orgs/${orgId}/roles?done=mappings#mappings`);
  });

  // The setup link's step: its organization only, from the session; there while the catalogue has roles.
  const linkOrg = (ctx: Context) => (ctx.state as ConsoleState).session.setupLink!.orgId;

  const showSetup = async (ctx: Context, notice?: Notice, status = 200) => {
    const { org, form } = await formData(ctx, linkOrg(ctx), '/console/setup/roles', 'setup');
    if (form.roles.length === 0) throw notFound('There are no roles to map groups to yet');
    sendPage(
      ctx,
      setupRolesPage({ ...form, brand, orgName: org.name, ...(notice ? { notice } : {}) }),
      status,
    );
  };

  router.get('/setup/roles', async (ctx) => {
    const done = query(ctx, 'done') === 'mappings';
    await showSetup(
      ctx,
      done ? { tone: 'ok', text: 'Saved: people get these roles from now on.' } : undefined,
    );
  });

  router.post('/setup/roles', audited('role_mappings.put'), async (ctx) => {
    try {
      await roles.putMappings(db, linkOrg(ctx), mappingsFromForm(ctx));
    } catch (error) {
      const refused = refusal(error);
      if (!refused) throw error;
      return showSetup(ctx, { tone: 'bad', text: `Not saved: ${refused.message}` }, refused.status);
    }
    seeOther(ctx, '/console/setup/roles?done=mappings');
  });
}
