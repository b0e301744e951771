import type { Kernel } from '@agentinfra/core';
import type { Context, Hono } from 'hono';
import type { ConsoleApi } from './api.js';
import type { PageFrame } from './layout.js';
import type { ConsoleSession } from './sessions.js';

/** The console app's Hono environment: the caller's address and the signed-in session. */
export interface ConsoleEnv {
  Bindings: { client?: string };
  Variables: { session: ConsoleSession };
}

/** The console's Hono app. */
export type ConsoleApp = Hono<ConsoleEnv>;
/** A request context of the console. */
export type ConsoleContext = Context<ConsoleEnv>;

/** What page modules get to register their routes. */
export interface PageDeps {
  api: ConsoleApi;
  kernel: Kernel;
  /** The mount path, e.g. `/console`. */
  base: string;
}

/** The frame of a page for this request, taking the session's flash message (shown once). */
export function frameOf(c: ConsoleContext, base: string): PageFrame {
  const session = c.get('session');
  const flash = session.flash;
  session.flash = undefined;
  return { base, session, flash };
}

/** Ends a POST: remembers `flash` for the next page and redirects there (303). */
export function redirectWith(c: ConsoleContext, location: string, flash?: ConsoleSession['flash']): Response {
  if (flash) c.get('session').flash = flash;
  return c.redirect(location, 303);
}

/**
 * Text the operator typed into a form (an agent id, a label, a number of
 * days): trimmed, or `undefined` when absent or blank. Never use it for a
 * value the console wrote into the form itself; see {@link exactField}.
 */
export function field(form: Record<string, unknown>, name: string): string | undefined {
  const value = form[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * A value the console wrote into a hidden form field to name a record (a
 * provenance, a device or run id, a host, an agent id, a setting key, a
 * cursor): exactly as posted back, spaces and invisible characters
 * included, or `undefined` when absent or empty. Trimming it would act on a
 * different record (forgetting `web` when `web ` was shown).
 */
export function exactField(form: Record<string, unknown>, name: string): string | undefined {
  const value = form[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * `path` with the query parameters `names` taken from a submitted form (the
 * filters and table pages the operator acted from), so that an action
 * returns to the page it was taken on. Only ever `path` on the console.
 */
export function backTo(path: string, form: Record<string, unknown>, names: readonly string[]): string {
  const query = new URLSearchParams();
  for (const name of names) {
    const value = exactField(form, name);
    if (value) query.set(name, value);
  }
  const search = query.toString();
  return search ? `${path}?${search}` : path;
}
