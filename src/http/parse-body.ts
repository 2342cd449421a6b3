// Input of the admin API and the console, checked against a zod schema: the first problem as a 400
// naming the field. Text Postgres cannot store is refused wherever it is in the input.
import type { z } from 'zod';
import { UNSTORABLE_TEXT_MESSAGE, unstorableAt } from '../db/text.js';
import { invalidRequest } from './admin-errors.js';

/** Refuses a body or query with text Postgres cannot store, wherever it is, naming where. */
export function refuseUnstorable(body: unknown): void {
  const at = unstorableAt(body);
  if (at !== undefined)
    throw invalidRequest(at ? `${at}: ${UNSTORABLE_TEXT_MESSAGE}` : UNSTORABLE_TEXT_MESSAGE);
}

export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  refuseUnstorable(body);
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.join('.');
  throw invalidRequest(field ? `${field}: ${issue.message}` : issue.message);
}
