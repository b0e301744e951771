import type { Knex } from 'knex';
import { z } from 'zod';
import type { LexicalSource } from './ports/lexical-index.js';

/** A Knex instance in an adapter's options (checked by shape: a function with `raw`), for the SQL index adapters. */
export const knexOptionSchema = z.custom<Knex>(
  (value) => typeof value === 'function' && typeof (value as { raw?: unknown }).raw === 'function',
  'knex must be a Knex instance',
);

/** The {@link LexicalSource} in a lexical index adapter's options; its names are checked as identifiers when used. */
export const lexicalSourceOptionSchema: z.ZodType<LexicalSource> = z.object({
  table: z.string(),
  key: z.string(),
  text: z.string(),
  owner: z.string(),
  scopes: z.string(),
  only: z.object({ column: z.string(), equals: z.string() }).optional(),
});
