// What an IT admin can do about the failed requests an IdP meets most, in a sentence each.
import { GROUP_SYNC_DISABLED } from '../resources/groups.routes.js';

interface Failure {
  readonly status: number;
  readonly scimType: string | null;
  readonly detail: string;
}

const HINTS: readonly [(f: Failure) => boolean, string][] = [
  [
    (f) => f.status === 401 && /expired/.test(f.detail),
    'The token has expired: create a new token for this organization and paste it into the IdP’s provisioning settings.',
  ],
  [
    (f) => f.status === 401 && /revoked/.test(f.detail),
    'The token was revoked: paste a current token of this organization into the IdP’s provisioning settings.',
  ],
  [
    (f) => f.status === 401 && /bearer token is required/.test(f.detail),
    'The IdP sent no token: put this organization’s SCIM token in its provisioning settings as the bearer token (Okta: Authorization, HTTP Header; Entra: Secret Token).',
  ],
  [
    (f) => f.status === 401,
    'The IdP sends a token this organization does not have: check that the base URL is this organization’s and that the token was pasted whole.',
  ],
  [
    (f) => f.status === 403 && f.detail === GROUP_SYNC_DISABLED,
    'Group sync is off for this organization: ask the operator to turn it on, or stop pushing groups from the IdP.',
  ],
  [
    (f) => f.status === 403 && /not allowed to access/.test(f.detail),
    'The token lacks the scope for this resource: create a token with the users and groups scopes.',
  ],
  [
    (f) => f.scimType === 'uniqueness',
    'A user or group with this name already exists: the IdP is creating one scimd already has. Match users on userName in the IdP’s settings, or remove the duplicate.',
  ],
  [
    (f) => /is ambiguous: more than one schema/.test(f.detail),
    'Two schemas of this organization define the attribute: map it in the IdP with its full name, the schema’s URN and the attribute.',
  ],
  [
    (f) => /names no attribute|is not an attribute of|cannot be used in a filter/.test(f.detail),
    'The IdP sends an attribute this organization’s schema lacks: add it as a custom attribute, or remove it from the IdP’s attribute mappings.',
  ],
  [
    (f) => f.status === 400 && /^Attribute /.test(f.detail),
    'An attribute has a value of the wrong kind: check its mapping in the IdP (type, single or multi-valued, required).',
  ],
  [
    (f) => f.status === 400 && /^(members|Members|Groups hold users)/.test(f.detail),
    'A group names members that are not users of this organization: push the users before their groups.',
  ],
  [
    (f) => f.status === 501,
    'The IdP asked for what scimd does not offer (Bulk, /Me): turn bulk operations off in the IdP’s settings; the ServiceProviderConfig says bulk is not supported.',
  ],
  [
    (f) => f.status === 405,
    'The IdP used a method this endpoint does not take: check the base URL in the IdP ends with the organization id, with nothing after it.',
  ],
  [
    (f) => f.status === 503 || f.status === 500,
    'scimd or its database could not serve the request; the IdP retries it. If it persists, give the operator the request id.',
  ],
];

/** A sentence on what to do about a failed request, when it is a common one. */
export function hintFor(failure: Failure): string | undefined {
  return HINTS.find(([matches]) => matches(failure))?.[1];
}
