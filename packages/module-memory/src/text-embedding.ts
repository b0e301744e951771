import type { Embedder } from '@agentinfra/core';

/**
 * Embeds `texts` and checks the embedder kept its promises (one vector per
 * text, each of `embedder.dimensions` finite numbers).
 * @returns one vector per text, in order.
 * @throws Error naming the embedder (the embedder's own error as `cause`) when it fails or breaks its contract.
 */
export async function embedTexts(embedder: Embedder, texts: readonly string[]): Promise<Float32Array[]> {
  let vectors: Float32Array[];
  try {
    vectors = await embedder.embed({ texts });
  } catch (cause) {
    throw new Error(`The embedder ${embedder.id} failed on ${texts.length} text(s).`, { cause });
  }
  if (vectors.length !== texts.length) {
    throw new Error(`The embedder ${embedder.id} returned ${vectors.length} vectors for ${texts.length} texts.`);
  }
  for (const vector of vectors) {
    if (vector.length !== embedder.dimensions) {
      throw new Error(`The embedder ${embedder.id} returned a vector of ${vector.length} dimensions instead of ${embedder.dimensions}.`);
    }
  }
  return vectors;
}

/** Whether every component of `vector` is zero (an embedding of text with nothing the model knows). */
export function isZeroVector(vector: Float32Array): boolean {
  for (const value of vector) if (value !== 0) return false;
  return true;
}
