// How console routes answer: an HTML page, or a redirect after a form (Post/Redirect/Get).
import type { Context } from 'koa';

export function sendPage(ctx: Context, page: string, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page;
}

export function seeOther(ctx: Context, location: string): void {
  ctx.status = 303;
  ctx.redirect(location);
}

type Form = Record<string, unknown>;

/** A form field's value: a string, trimmed; '' when absent or anything else (qs can parse objects). */
export function field(ctx: Context, name: string): string {
  const value = (ctx.request.body as Form | undefined)?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first.trim() : '';
}

/** A repeated form field's string values (checkboxes of one name). */
export function fields(ctx: Context, name: string): string[] {
  const value = (ctx.request.body as Form | undefined)?.[name];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
}

export const checked = (ctx: Context, name: string) => field(ctx, name) === 'true';
