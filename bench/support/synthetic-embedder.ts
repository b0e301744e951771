/**
 * The benchmarks' synthetic model as an in-process {@link Embedder}: each
 * text becomes {@link vectorForText} of it. Its id is the one the
 * OpenAI-compatible embedder reports for the stand-in server of
 * vector-embedding-server.ts (`openai:synthetic-384@384`), since it is the
 * same model: a store written through either is readable through the other.
 */
import type { Embedder } from '@agentinfra/core';
import { DIMENSIONS, vectorForText } from './synthetic-vectors.js';

export const syntheticEmbedder: Embedder = {
  id: `openai:synthetic-${DIMENSIONS}@${DIMENSIONS}`,
  dimensions: DIMENSIONS,
  embed: async ({ texts }) => texts.map(vectorForText),
};
