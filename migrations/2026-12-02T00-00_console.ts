import { type Kysely, sql } from 'kysely';

// The console: setup links an operator sends to a customer's IT admin, and the browser sessions of
// operators and of those who opened a link. Only hashes of their secrets are stored.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table setup_links (
      id uuid primary key,
      org_id uuid not null references orgs (id) on delete cascade,
      prefix text not null,
      secret_hash bytea not null unique,
      note text not null,
      created_by text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      revoked_at timestamptz,
      last_opened_at timestamptz
    )`.execute(db);
  await sql`create index setup_links_org on setup_links (org_id, created_at)`.execute(db);

  // A session without a setup link is an operator's, signed in with the admin token whose fingerprint
  // it keeps: a new admin token ends the sessions of the old one.
  await sql`
    create table console_sessions (
      id uuid primary key,
      secret_hash bytea not null unique,
      setup_link_id uuid references setup_links (id) on delete cascade,
      admin_fingerprint text,
      created_at timestamptz not null,
      expires_at timestamptz not null
    )`.execute(db);
  await sql`create index console_sessions_expiry on console_sessions (expires_at)`.execute(db);
  await sql`create index console_sessions_link on console_sessions (setup_link_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table console_sessions, setup_links`.execute(db);
}
