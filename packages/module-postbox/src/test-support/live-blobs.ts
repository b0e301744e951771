import type { BlobStore } from '@agentinfra/core';

/**
 * The blob keys written and not deleted since it was made (`keys`), and the
 * wrapper (`wrap`, for `startPostboxTestServer`'s `wrapBlobStore`) that
 * records them on the real store: a refused message must leave none behind.
 */
export function liveBlobs(): { keys: Set<string>; wrap: (store: BlobStore) => BlobStore } {
  const keys = new Set<string>();
  return {
    keys,
    wrap: (store) => ({
      ...store,
      async put(options) {
        const result = await store.put(options);
        keys.add(options.key);
        return result;
      },
      async delete(options) {
        const result = await store.delete(options);
        for (const key of options.keys) keys.delete(key);
        return result;
      },
    }),
  };
}
