import { z } from 'zod';

/** Longest artifact key in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

/** Whether `text` holds a control character (C0, DEL or C1). */
function hasControlCharacter(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/**
 * Bidirectional formatting marks (U+061C, U+200E, U+200F, U+202A–U+202E,
 * U+2066–U+2069) and the line and paragraph separators (U+2028, U+2029):
 * invisible, they make a name read as another in the download's file name
 * (`invoice\u202Efdp.exe` shows as `invoiceexe.pdf`, Unicode TR #36 §2.1).
 */
const DECEPTIVE_FORMATTING = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;

/** Percent-decodes a segment until it stops changing (catches `%2e%2e` and `%252e%252e`); malformed escapes stay as they are. */
function decodeFully(segment: string): string {
  let current = segment;
  for (let round = 0; round < 4; round += 1) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return current;
    }
    if (next === current) return current;
    current = next;
  }
  return current;
}

/**
 * Why `key` is not a valid artifact key, or `null`: a relative, path-like
 * name of 1–1024 UTF-8 bytes; no leading `/` or drive letter, no backslash,
 * control character or bidirectional formatting mark, no empty segment, and no segment that is (or
 * percent-decodes to) `.`, `..`, or holds a `/` or `\`.
 */
export function artifactKeyProblem(key: string): string | null {
  if (key.length === 0) return 'must not be empty';
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return `must be at most ${MAX_KEY_BYTES} bytes of UTF-8`;
  if (key.startsWith('/') || /^[A-Za-z]:/.test(key)) return 'must be relative (no leading "/" or drive letter)';
  if (key.includes('\\')) return 'must not contain a backslash';
  if (hasControlCharacter(key)) return 'must not contain control characters';
  if (DECEPTIVE_FORMATTING.test(key)) return 'must not contain bidirectional formatting marks or line separators (U+202E, U+2028 …)';
  for (const segment of key.split('/')) {
    if (segment === '') return 'must not have empty segments ("//" or a trailing "/")';
    const decoded = decodeFully(segment);
    if (decoded === '.' || decoded === '..') return 'must not contain "." or ".." segments (also percent-encoded)';
    if (decoded !== segment && /[/\\]/.test(decoded)) return 'must not contain percent-encoded "/" or "\\"';
  }
  return null;
}

/** An artifact key (see {@link artifactKeyProblem}). */
export const artifactKeySchema = z.string().superRefine((key, ctx) => {
  const problem = artifactKeyProblem(key);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** A key prefix for /list: empty, or any string a key could start with (at most 1024 bytes, no control characters). */
export const keyPrefixSchema = z
  .string()
  .refine((prefix) => Buffer.byteLength(prefix, 'utf8') <= MAX_KEY_BYTES, `must be at most ${MAX_KEY_BYTES} bytes of UTF-8`)
  .refine((prefix) => !hasControlCharacter(prefix), 'must not contain control characters');

/** The last segment of a key: the filename downloads are saved as. */
export function filenameOf(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}
