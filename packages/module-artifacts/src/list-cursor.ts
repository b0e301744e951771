import { InputError } from '@agentinfra/core';
import { z } from 'zod';

const cursorSchema = z.object({ c: z.number().int(), i: z.string().min(1).max(64) });

/** Position after the last listed artifact: its `created_at` (ms) and id, the keys of the newest-first order. */
export type ListCursor = z.output<typeof cursorSchema>;

/** The opaque `next_cursor` string for a position (base64url of JSON). */
export function encodeCursor(cursor: ListCursor): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

/** Reads a `cursor` from the client. @throws InputError (400) when it was not made by {@link encodeCursor}. */
export function decodeCursor(value: string): ListCursor {
  try {
    return cursorSchema.parse(JSON.parse(Buffer.from(value, 'base64url').toString('utf8')));
  } catch {
    throw new InputError('cursor is not a value returned as next_cursor.', { fields: [{ path: 'cursor', message: 'unknown cursor' }] });
  }
}
