// What an IT admin can do about the failed requests an IdP meets most, in a sentence each: chosen by
// the reason the error carried (http/scim-errors.ts FailureReason), else by its status or scimType.
// IT admins read them under the operator's brand (the setup page), so they call scimd "this service".

interface Failure {
  readonly status: number;
  readonly scimType: string | null;
  readonly reason: string | null;
}

const BY_REASON: Readonly<Record<string, string>> = {
  token_expired:
    'The token has expired: create a new token for this organization and paste it into the IdP’s provisioning settings.',
  token_revoked:
    'The token was revoked: paste a current token of this organization into the IdP’s provisioning settings.',
  token_missing:
    'The IdP sent no token: put this organization’s SCIM token in its provisioning settings as the bearer token (Okta: Authorization, HTTP Header; Entra: Secret Token).',
  token_unknown:
    'The IdP sends a token this organization does not have: check that the base URL is this organization’s and that the token was pasted whole.',
  group_sync_disabled:
    'Group sync is off for this organization: ask the operator to turn it on, or stop pushing groups from the IdP.',
  scope_missing:
    'The token lacks the scope for this resource: create a token with the users and groups scopes.',
  ambiguous_attribute:
    'Two schemas of this organization define the attribute: map it in the IdP with its full name, the schema’s URN and the attribute.',
  unknown_attribute:
    'The IdP sends an attribute this organization’s schema lacks: add it as a custom attribute, or remove it from the IdP’s attribute mappings.',
  attribute_value:
    'An attribute has a value of the wrong kind: check its mapping in the IdP (type, single or multi-valued, required).',
  members_not_users:
    'A group names members that are not users of this organization: push the users before their groups.',
  value_not_catalogued:
    'The IdP assigns a role or entitlement this service does not offer: assign only the values its /Roles and /Entitlements list (Okta: import them again; Entra: make the app roles’ values match), or ask the operator to add it.',
};

const BY_STATUS: Readonly<Record<number, string>> = {
  401: BY_REASON.token_unknown!,
  405: 'The IdP used a method this endpoint does not take: check the base URL in the IdP ends with the organization id, with nothing after it.',
  500: 'This service or its database could not serve the request; the IdP retries it. If it persists, give the operator the request id.',
  501: 'The IdP asked for what this service does not offer (Bulk, /Me): turn bulk operations off in the IdP’s settings; the ServiceProviderConfig says bulk is not supported.',
  503: 'This service or its database could not serve the request; the IdP retries it. If it persists, give the operator the request id.',
};

const UNIQUENESS =
  'A user or group with this name already exists: the IdP is creating one this service already has. Match users on userName in the IdP’s settings, or remove the duplicate.';

/** A sentence on what to do about a failed request, when it is a common one. */
export function hintFor(failure: Failure): string | undefined {
  if (failure.reason && BY_REASON[failure.reason]) return BY_REASON[failure.reason];
  if (failure.scimType === 'uniqueness') return UNIQUENESS;
  return BY_STATUS[failure.status];
}
