// The edge of PATCH: a request body becomes RFC 7644 §3.5.2 operations. What IdPs send that the RFC
// does not say is normalised here, once, so applyPatch sees RFC-shaped operations only.
import { InvalidSyntaxError, InvalidValueError } from '../http/scim-errors.js';
import { isObject } from '../json.js';

const PATCH_OP_URN = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const MAX_OPERATIONS = 1000;

type PatchOpName = 'add' | 'replace' | 'remove';

export interface PatchOperation {
  readonly op: PatchOpName;
  readonly path: string | undefined;
  /** Absent for remove without a value. */
  readonly value?: unknown;
  /** Position in the request, for error messages. */
  readonly index: number;
}

function keyOf(body: Record<string, unknown>, name: string): unknown {
  const found = Object.keys(body).find((k) => k.toLowerCase() === name.toLowerCase());
  return found === undefined ? undefined : body[found];
}

export function parsePatchRequest(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw new InvalidSyntaxError('A PATCH body must be a PatchOp JSON object');
  const schemas = keyOf(body, 'schemas');
  if (schemas !== undefined && (!Array.isArray(schemas) || !schemas.every((s) => typeof s === 'string'))) {
    throw new InvalidSyntaxError('schemas must be an array of schema URNs');
  }
  // RFC 7644 §3.5.2 spells it `Operations`; some clients send `operations`.
  const operations = keyOf(body, 'Operations');
  if (!Array.isArray(operations)) {
    throw new InvalidSyntaxError(`A PatchOp body needs an Operations array (${PATCH_OP_URN})`);
  }
  if (operations.length > MAX_OPERATIONS) {
    throw new InvalidValueError(`A PATCH may carry at most ${MAX_OPERATIONS} operations`);
  }
  return operations.map((raw, index) => {
    if (!isObject(raw)) throw new InvalidSyntaxError(`Operations[${index}] must be an object`);
    // Entra sends `Add`/`Replace`/`Remove`; Okta and the RFC use lower case.
    const op = keyOf(raw, 'op');
    const name = typeof op === 'string' ? op.toLowerCase() : undefined;
    if (name !== 'add' && name !== 'replace' && name !== 'remove') {
      throw new InvalidSyntaxError(
        `Operations[${index}].op must be add, replace or remove, not ${JSON.stringify(op)}`,
      );
    }
    const path = keyOf(raw, 'path');
    if (path !== undefined && path !== null && typeof path !== 'string') {
      throw new InvalidSyntaxError(`Operations[${index}].path must be a string`);
    }
    const trimmed = typeof path === 'string' && path.trim() !== '' ? path.trim() : undefined;
    const hasValue = Object.keys(raw).some((k) => k.toLowerCase() === 'value');
    // RFC 7644 §3.5.2.1, §3.5.2.3: add and replace carry a value (an explicit null unsets).
    if (name !== 'remove' && !hasValue) {
      throw new InvalidSyntaxError(`Operations[${index}]: ${name} needs a value`);
    }
    // Other keys (the Microsoft collection sends `name`) are ignored.
    return { op: name, path: trimmed, ...(hasValue ? { value: keyOf(raw, 'value') } : {}), index };
  });
}
