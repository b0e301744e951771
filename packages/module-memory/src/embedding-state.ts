import type { Knex } from 'knex';
import { z } from 'zod';

/** Key of the embedding state row in `memory_meta`. */
const EMBEDDING_KEY = 'embedding';

/** Vector table prefix of generation 0: the `vectorIndex` port the kernel gives the module. */
export const DEFAULT_VECTOR_TABLE = 'memory_vectors';

/**
 * Vector table prefix of a generation. Each re-embed writes a new generation,
 * so the active vectors stay intact until the new ones are complete.
 * @example vectorTableOf(0) === 'memory_vectors'; vectorTableOf(2) === 'memory_vectors_g2'
 */
export function vectorTableOf(generation: number): string {
  return generation === 0 ? DEFAULT_VECTOR_TABLE : `${DEFAULT_VECTOR_TABLE}_g${generation}`;
}

/** A re-embed in progress: where its vectors go and the last memory id done. */
export const reembedProgressSchema = z.object({
  embedderId: z.string(),
  dimensions: z.number().int().positive(),
  generation: z.number().int().min(1),
  /** Id of the last semantic memory embedded (memories are walked in id order); `null` before the first batch. */
  cursor: z.string().nullable(),
});
/** A re-embed in progress. */
export type ReembedProgress = z.infer<typeof reembedProgressSchema>;

/**
 * Which embedder made the vectors of the active index, and where that index
 * lives. Stored as JSON in `memory_meta` under the key `embedding`.
 */
export const embeddingStateSchema = z.object({
  /** {@link Embedder.id} the active vectors were made with. */
  embedderId: z.string(),
  dimensions: z.number().int().positive(),
  /** Generation of the active vector table (see {@link vectorTableOf}). */
  generation: z.number().int().min(0),
  /** An unfinished re-embed, or `null`. */
  reembed: reembedProgressSchema.nullable(),
});
/** The stored embedding state. */
export type EmbeddingState = z.infer<typeof embeddingStateSchema>;

/**
 * Reads the embedding state.
 * @returns the state, or `null` before the module first started.
 * @throws Error when the stored JSON does not match {@link embeddingStateSchema} (a hand-edited row).
 */
export async function readEmbeddingState(knex: Knex | Knex.Transaction): Promise<EmbeddingState | null> {
  const row = (await knex('memory_meta').select('value').where({ key: EMBEDDING_KEY }).first()) as { value: string } | undefined;
  if (!row) return null;
  const parsed = embeddingStateSchema.safeParse(JSON.parse(row.value));
  if (!parsed.success) throw new Error(`memory_meta row "${EMBEDDING_KEY}" is malformed: ${parsed.error.message}`);
  return parsed.data;
}

/**
 * Stores `state` unless a state already exists (two replicas starting at
 * once agree on the first one).
 * @returns the state now stored.
 */
export async function initEmbeddingState(knex: Knex, state: EmbeddingState, now: number): Promise<EmbeddingState> {
  await knex('memory_meta')
    .insert({ key: EMBEDDING_KEY, value: JSON.stringify(state), updated_at: now })
    .onConflict('key')
    .ignore();
  return (await readEmbeddingState(knex)) ?? state;
}

/** Replaces the stored embedding state. */
export async function writeEmbeddingState(knex: Knex | Knex.Transaction, state: EmbeddingState, now: number): Promise<void> {
  await knex('memory_meta')
    .where({ key: EMBEDDING_KEY })
    .update({ value: JSON.stringify(state), updated_at: now });
}
