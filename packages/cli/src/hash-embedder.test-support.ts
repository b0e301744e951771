import { createHash } from 'node:crypto';
import type { Embedder } from '@agentinfra/core';

/** A deterministic bag-of-words embedder for tests that are not about retrieval quality. */
export function createHashEmbedder(dimensions = 64): Embedder {
  return {
    id: `test-hash-${dimensions}`,
    dimensions,
    async embed({ texts }) {
      return texts.map((text) => {
        const vector = new Float32Array(dimensions);
        for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
          vector[createHash('sha1').update(word).digest()[0]! % dimensions]! += 1;
        }
        const norm = Math.hypot(...vector) || 1;
        return vector.map((value) => value / norm);
      });
    },
  };
}
