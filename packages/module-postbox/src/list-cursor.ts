import { InputError } from '@agentinfra/core';

const PREFIX = 'c1.';

/**
 * Encodes a /list position (the `seq` of the last message returned) as an
 * opaque cursor `c1.<base64url>`. Clients only pass it back as `since`.
 */
export function encodeCursor(seq: number): string {
  return PREFIX + Buffer.from(JSON.stringify({ s: seq }), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by {@link encodeCursor}.
 * @throws InputError (400, field `since`) when it is not one.
 */
export function decodeCursor(cursor: string): number {
  const invalid = () =>
    new InputError('since is not a cursor returned by /list.', { fields: [{ path: 'since', message: 'unknown cursor' }] });
  if (!cursor.startsWith(PREFIX)) throw invalid();
  try {
    const parsed = JSON.parse(Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8')) as { s?: unknown };
    if (typeof parsed.s !== 'number' || !Number.isSafeInteger(parsed.s) || parsed.s < 0) throw invalid();
    return parsed.s;
  } catch {
    throw invalid();
  }
}
