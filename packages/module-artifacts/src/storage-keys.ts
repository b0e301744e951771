import { randomBytes } from 'node:crypto';

/**
 * Blob store keys of an artifact. The caller's key never becomes a storage
 * key: uploads land on `artifacts/<id>/upload`; a commit moves that object to
 * a fresh `artifacts/<id>/v-<random>` before hashing it, so what was verified
 * is exactly what is served, whatever is PUT to the upload URL afterwards.
 */
export function uploadKeyOf(artifactId: string): string {
  return `artifacts/${artifactId}/upload`;
}

/** A new, unguessable key for the committed object of an artifact. */
export function newCommittedKey(artifactId: string): string {
  return `artifacts/${artifactId}/v-${randomBytes(12).toString('base64url')}`;
}
