import type { z } from 'zod';
import { InputError } from '../errors.js';
import { parseJsonBytes } from '../kernel/json-text.js';

const PREFIX = 'c1.';

/** Encodes and decodes one list's opaque cursors (see {@link createListCursor}). */
export interface ListCursor<T> {
  /** The opaque `next_cursor` for a position: `c1.` + base64url of its JSON. */
  encode(position: T): string;
  /**
   * Reads a cursor the client passed back.
   * @throws InputError (400, naming `field`) when it was not made by `encode` of this list.
   */
  decode(cursor: string): T;
}

/**
 * A cursor codec for keyset pagination: the position after the last listed
 * row (its sort keys), validated by `schema` when it comes back, so a forged
 * cursor or one of a list with another shape is a 400 and never reaches SQL;
 * so is one whose JSON a request body could not carry (invalid UTF-8, a
 * string escaping NUL or a lone surrogate, nesting past the body limits).
 * A cursor is not bound to the query that made it: one passed to another
 * query of the same list only moves where that query starts, within the rows
 * the caller may see anyway.
 * @param options.schema the position's shape, e.g. `z.object({ c: z.number().int(), i: z.string() })`.
 * @param options.field the request field that carries it (`cursor`, `since`), for the error.
 */
export function createListCursor<T>(options: { schema: z.ZodType<T>; field: string }): ListCursor<T> {
  const invalid = () =>
    new InputError(`${options.field} is not a cursor returned by this list.`, {
      fields: [{ path: options.field, message: 'unknown cursor' }],
    });
  return {
    encode: (position) => PREFIX + Buffer.from(JSON.stringify(position), 'utf8').toString('base64url'),
    decode(cursor) {
      if (!cursor.startsWith(PREFIX)) throw invalid();
      // The request-body checks apply to the JSON inside too: a string escaping NUL or a lone surrogate
      // would otherwise reach PostgreSQL as a bind parameter it refuses (a 500 there, a 200 on SQLite).
      // (It also reads blank text as `{}`, which no `encode` makes.)
      const json = Buffer.from(cursor.slice(PREFIX.length), 'base64url');
      if (json.toString('latin1').trim() === '') throw invalid();
      const parsed = parseJsonBytes(json);
      if (!parsed.ok) throw invalid();
      const checked = options.schema.safeParse(parsed.value);
      if (!checked.success) throw invalid();
      return checked.data;
    },
  };
}
