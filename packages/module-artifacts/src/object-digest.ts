import { createHash } from 'node:crypto';
import type { BlobStore } from '@agentinfra/core';

/**
 * Streams an object through SHA-256 (FIPS 180-4).
 * @returns its hex digest and byte count, or `null` when it does not exist.
 */
export async function digestObject(store: BlobStore, key: string): Promise<{ sha256: string; size: number } | null> {
  const stream = await store.get({ key });
  if (!stream) return null;
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    hash.update(chunk as Buffer);
  }
  return { sha256: hash.digest('hex'), size };
}
