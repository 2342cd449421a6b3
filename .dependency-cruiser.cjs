// The house's import rules, checked by `npm run check` (dependency-cruiser): no circles, and imports
// run one way: entry points → surfaces → domains → schema/filter → the http kit → db and utilities.
const ENTRY =
  '^src/(index|cli|app|config|admin-token|receiver|server|start|version|serving-address)[.]ts$|^src/cli/';
const SURFACES = '^src/(admin|console|scim)/';
const DOMAINS =
  '^src/(orgs|resources|changes|webhooks|custom-schemas|health|audit|sessions|discovery|metrics|roles)/';
const CORE = '^src/(schema|filter)/';
const KIT = '^src/http/';
const BASE = '^src/db/|^src/(json|log|secrets)[.]ts$';
// What `scimd/client` may import: itself and the change types, so that it ships without the server.
const CLIENT = '^src/client/';
const CHANGE_TYPES = '^src/changes/change-types[.]ts$';

const upward = (name, from, to) => ({
  name,
  severity: 'error',
  comment: 'an import from a lower layer to a higher one',
  from: { path: from },
  to: { path: to },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    upward('surface-to-entry', SURFACES, ENTRY),
    upward('domain-to-surface', DOMAINS, `${ENTRY}|${SURFACES}`),
    upward('core-to-domain', CORE, `${ENTRY}|${SURFACES}|${DOMAINS}`),
    upward('kit-to-core', KIT, `${ENTRY}|${SURFACES}|${DOMAINS}|${CORE}`),
    upward('base-to-kit', BASE, `${ENTRY}|${SURFACES}|${DOMAINS}|${CORE}|${KIT}`),
    {
      name: 'client-apart',
      severity: 'error',
      comment: 'scimd/client imports nothing but itself and the change types: no server, no package',
      from: { path: CLIENT },
      to: { pathNot: `${CLIENT}|${CHANGE_TYPES}` },
    },
    {
      name: 'change-types-alone',
      severity: 'error',
      comment: 'the change types, which scimd and scimd/client export, import nothing',
      from: { path: CHANGE_TYPES },
      to: {},
    },
    {
      name: 'migrations-apart',
      severity: 'error',
      from: { path: '^migrations/[^/]+[.]ts$', pathNot: '^migrations/index[.]ts$' },
      to: { path: '^migrations/' },
    },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
  },
};
