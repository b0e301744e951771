import { storageKeyProblem } from '@agentinfra/core';

/** The URL path of a key: each segment percent-encoded, joined by `/`. */
export function urlPathOfKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

/**
 * The key a URL path (the part after the mount path and its `/`) names, or
 * `null` when a segment is not valid percent-encoding or the key breaks the rule.
 */
export function keyOfUrlPath(path: string): string | null {
  let key: string;
  try {
    key = path.split('/').map(decodeURIComponent).join('/');
  } catch {
    return null;
  }
  return storageKeyProblem(key) === null ? key : null;
}
