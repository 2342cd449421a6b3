// Console sessions in a cookie: an operator's (signed in with the admin token) or an IT admin's
// (opened from a setup link, and limited to its organization). The cookie holds a random secret; the
// database keeps its hash. Forms carry a CSRF token derived from the secret.
import { createHmac, randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { generateSecret, hashMatches, hashSecret, SESSION_PREFIX } from '../secrets.js';
import * as repo from './sessions.repository.js';

/** How long an operator stays signed in. */
const OPERATOR_SESSION_HOURS = 8;
/** How long one opening of a setup link lasts, at most (never past the link's own expiry). */
const SETUP_SESSION_HOURS = 12;

export type Audience = 'operator' | 'setup';

const COOKIES: Record<Audience, { name: string; path: string }> = {
  operator: { name: 'scimd_console', path: '/console' },
  setup: { name: 'scimd_setup', path: '/console/setup' },
};

export interface ConsoleSession {
  readonly id: string;
  readonly csrf: string;
  /** What the audit log names as the actor: `console:<session id>` or `setup_link:<link id>`. */
  readonly actor: string;
  readonly setupLink?: { readonly id: string; readonly orgId: string };
}

const csrfTokenOf = (secret: string) => createHmac('sha256', secret).update('csrf').digest('base64url');

export function csrfMatches(session: ConsoleSession, presented: unknown): boolean {
  if (typeof presented !== 'string' || presented.length === 0) return false;
  return hashMatches(hashSecret(presented), hashSecret(session.csrf));
}

export class Sessions {
  /** What an operator's session keeps of the admin token: sessions of an earlier token are refused. */
  private readonly adminFingerprint: string;

  constructor(
    private readonly db: Kysely<DB>,
    adminToken: string,
    /** Cookies are `Secure` when scimd is reached over https. */
    private readonly secure: boolean,
    /** Where browsers reach scimd below the origin ('' at its root): cookies' paths start with it. */
    private readonly basePath = '',
  ) {
    this.adminFingerprint = createHmac('sha256', adminToken)
      .update('scimd console session')
      .digest('base64url');
  }

  /**
   * Starts a session (ending the one the browser had) and sets its cookie; a setup link's session ends
   * with the link at the latest.
   */
  async start(ctx: Context, audience: Audience, setupLink?: { id: string; expiresAt: Date }): Promise<void> {
    const now = new Date();
    const hours = audience === 'operator' ? OPERATOR_SESSION_HOURS : SETUP_SESSION_HOURS;
    let expiresAt = new Date(now.getTime() + hours * 3_600_000);
    if (setupLink && setupLink.expiresAt < expiresAt) expiresAt = setupLink.expiresAt;
    const previous = ctx.cookies.get(COOKIES[audience].name);
    if (previous) await repo.deleteSession(this.db, hashSecret(previous));
    await repo.deleteExpiredSessions(this.db, now);
    const secret = generateSecret(SESSION_PREFIX);
    await repo.insertSession(this.db, {
      id: randomUUID(),
      secretHash: hashSecret(secret),
      setupLinkId: setupLink?.id ?? null,
      adminFingerprint: setupLink ? null : this.adminFingerprint,
      createdAt: now,
      expiresAt,
    });
    this.setCookie(ctx, audience, secret, Math.floor((expiresAt.getTime() - now.getTime()) / 1000));
  }

  /** The live session of the request's cookie, if any. */
  async read(ctx: Context, audience: Audience): Promise<ConsoleSession | undefined> {
    const secret = ctx.cookies.get(COOKIES[audience].name);
    if (!secret?.startsWith(SESSION_PREFIX)) return undefined;
    const stored = await repo.findLiveSession(this.db, hashSecret(secret), new Date());
    if (!stored || (audience === 'setup') !== Boolean(stored.setupLink)) return undefined;
    if (audience === 'operator' && stored.adminFingerprint !== this.adminFingerprint) return undefined;
    return {
      id: stored.id,
      csrf: csrfTokenOf(secret),
      actor: stored.setupLink ? `setup_link:${stored.setupLink.id}` : `console:${stored.id}`,
      ...(stored.setupLink ? { setupLink: stored.setupLink } : {}),
    };
  }

  async end(ctx: Context, audience: Audience): Promise<void> {
    const secret = ctx.cookies.get(COOKIES[audience].name);
    if (secret) await repo.deleteSession(this.db, hashSecret(secret));
    this.setCookie(ctx, audience, '', 0);
  }

  private setCookie(ctx: Context, audience: Audience, value: string, maxAgeSeconds: number): void {
    const { name, path } = COOKIES[audience];
    const attributes = [
      `Path=${this.basePath}${path}`,
      `Max-Age=${maxAgeSeconds}`,
      'HttpOnly',
      'SameSite=Strict',
    ];
    if (this.secure) attributes.push('Secure');
    ctx.append('Set-Cookie', [`${name}=${value}`, ...attributes].join('; '));
  }
}
