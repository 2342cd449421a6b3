// The house's import rules, checked by `npm run check` (dependency-cruiser): no circles, and imports
// run one way: entry points → surfaces → domains → schema/filter → the http kit → db and utilities.
const ENTRY = '^src/(index|cli|app|config|admin-token|receiver)[.]ts$|^src/cli/';
const SURFACES = '^src/(admin|console|scim)/';
const DOMAINS =
  '^src/(orgs|resources|changes|webhooks|custom-schemas|health|audit|sessions|discovery|metrics)/';
const CORE = '^src/(schema|filter)/';
const KIT = '^src/http/';
const BASE = '^src/db/|^src/(json|log|secrets)[.]ts$';

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
