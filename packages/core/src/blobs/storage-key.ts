/** Longest key in UTF-8 bytes (the BlobStore port's rule). */
export const MAX_KEY_BYTES = 1024;

/** Whether `text` holds a control character (C0, DEL or C1) or a backslash. */
function hasForbiddenCharacter(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || char === '\\') return true;
  }
  return false;
}

/**
 * Why `key` is not a valid BlobStore key, or `null` when it is: 1–1024 bytes
 * of UTF-8, `/`-separated segments, none empty, `.` or `..`, no leading `/`,
 * no backslash and no control character.
 */
export function storageKeyProblem(key: string): string | null {
  if (typeof key !== 'string' || key.length === 0) return 'is empty';
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return `is longer than ${MAX_KEY_BYTES} bytes`;
  if (hasForbiddenCharacter(key)) return 'holds a control character or a backslash';
  if (key.startsWith('/')) return 'starts with "/"';
  for (const segment of key.split('/')) {
    if (segment === '') return 'has an empty segment';
    if (segment === '.' || segment === '..') return 'has a "." or ".." segment';
  }
  return null;
}

/** @throws RangeError when `key` breaks the rule of {@link storageKeyProblem}. */
export function assertStorageKey(key: string): void {
  const problem = storageKeyProblem(key);
  if (problem) throw new RangeError(`Invalid blob key ${JSON.stringify(String(key).slice(0, 80))}: it ${problem}.`);
}
