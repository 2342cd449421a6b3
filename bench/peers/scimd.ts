// scimd as a bench peer: the built server on the database the bench made for it, with one organization
// (group sync on) and a SCIM token of it, both made through the admin API.
import './defaults.js';
import { randomBytes } from 'node:crypto';
import { type Server, start, stop } from '../measure.js';

export async function startScimd(
  databaseUrl: string,
): Promise<{ server: Server; base: string; token: string }> {
  const adminToken = randomBytes(24).toString('hex');
  const server = await start(['dist/src/index.js'], {
    DATABASE_URL: databaseUrl,
    SCIMD_ADMIN_TOKEN: adminToken,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  });
  const admin = async (path: string, body: unknown) => {
    const res = await fetch(`${server.origin}/admin/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`scimd: POST /admin/v1${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };
  try {
    const org = await admin('/orgs', { name: 'bench peers', groupSync: true });
    const { token } = await admin(`/orgs/${org.id}/tokens`, { name: 'bench peers' });
    return { server, base: `/scim/v2/${org.id}`, token: token! };
  } catch (error) {
    await stop(server);
    throw error;
  }
}
