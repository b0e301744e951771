import { z } from 'zod';

/**
 * Shared field schemas so every module validates the same things the same way.
 */

/** An agent id: 1–128 characters of letters, digits and `_ . : @ -`, starting with a letter or digit. */
export const agentIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:@-]*$/, 'must be 1–128 letters, digits or _ . : @ -, starting with a letter or digit');

/** An ISO 8601 timestamp with an explicit offset (`Z` or `±hh:mm`), parsed to milliseconds since the epoch. */
export const timestampSchema = z.iso.datetime({ offset: true }).transform((value) => Date.parse(value));

/**
 * A timestamp in a response: ISO 8601 UTC with `Z` and millisecond precision
 * (`2026-11-24T09:30:00.000Z`), as `isoTimestamp()` writes it.
 */
export const instantSchema = z.iso.datetime({ precision: 3 });

/** A permission name `<area>.<action>` (CONTRACT.md "Credentials"). */
export const permissionNameSchema = z.string().regex(/^[a-z]+\.[a-z]+$/, 'must be <area>.<action>');

/** A visibility scope entry: `self` or `team:<name>`. */
export const scopeEntrySchema = z
  .string()
  .regex(/^(self|team:[A-Za-z0-9][A-Za-z0-9_.-]{0,63})$/, 'must be "self" or "team:<name>" (name: 1–64 letters, digits or _ . -)');

/** A team name (without the `team:` prefix). */
export const teamNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1–64 letters, digits or _ . -, starting with a letter or digit');
