// Better Auth's SCIM plugin as a bench peer: Better Auth on a pg pool of the database the bench made
// for it (DATABASE_URL), its tables from its own migrations, one SCIM connection whose bearer token is
// SCIM_TOKEN, served by node:http on PORT under /api/auth/scim/v2.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { scim } from '@better-auth/scim';
import { type BetterAuthOptions, betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { toNodeHandler } from 'better-auth/node';
import pg from 'pg';

const port = Number(process.env.PORT);
const host = process.env.HOST ?? '127.0.0.1';
// As many connections as scimd's pool (DATABASE_POOL_SIZE's default).
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const options = {
  baseURL: `http://${host}:${port}`,
  secret: randomBytes(32).toString('hex'),
  database: pool,
  // Both off, as a server behind its own limits would run: the bench sends thousands a second.
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
  logger: { level: 'error' },
  plugins: [
    scim({
      connections: [
        {
          id: 'bench',
          credentials: [{ type: 'bearer', id: 'bench', token: process.env.SCIM_TOKEN! }],
        },
      ],
    }),
  ],
} satisfies BetterAuthOptions;

const { runMigrations } = await getMigrations(options);
await runMigrations();
const handle = toNodeHandler(betterAuth(options));
createServer((req, res) => {
  if (req.url === '/readyz') res.end('ready');
  else void handle(req, res);
}).listen(port, host);
// At once: requests still in Better Auth's hands would find the pool ended, and the bench drops the
// database after.
process.on('SIGTERM', () => process.exit(0));
