import type { Embedder, VectorIndex } from '@agentinfra/core';
import type { Knex } from 'knex';
import {
  type EmbeddingState,
  initEmbeddingState,
  type ReembedProgress,
  readEmbeddingState,
  writeEmbeddingState,
} from './embedding-state.js';
import { countSemantic, semanticBatchAfter, storedIds } from './semantic-records.js';
import { embedTexts, isZeroVector } from './text-embedding.js';

/** What {@link reembedAll} works with. */
export interface ReembedContext {
  knex: Knex;
  /** The configured embedder; the store is re-embedded with it. */
  embedder: Embedder;
  now(): number;
  /** The vector index of a generation. */
  indexOf(generation: number): VectorIndex;
  /** Memories read, embedded and indexed per batch. */
  batchSize: number;
}

/** Options of `MemoryService.reembed`. */
export interface ReembedOptions {
  /**
   * Called after each batch (and once before the first) with the number of
   * semantic memories embedded so far and the total.
   */
  onProgress?: (done: number, total: number) => void;
  /** Re-embed even when the store already matches the configured embedder. */
  force?: boolean;
}

/** Outcome of `MemoryService.reembed`. */
export interface ReembedResult {
  /** Embedder the store is now embedded with. */
  embedderId: string;
  dimensions: number;
  /** Semantic memories in the store. */
  total: number;
  /** Semantic memories embedded by this call (0 when the store already matched). */
  embedded: number;
  /** Whether this call continued an interrupted re-embed. */
  resumed: boolean;
  /** Whether the vectors of the replaced index were removed (a failure there leaves only unused rows). */
  previousIndexCleared: boolean;
}

/** Removes every semantic memory's vector from a replaced index, batch by batch. @returns false when it failed. */
async function clearIndex(context: ReembedContext, index: VectorIndex): Promise<boolean> {
  try {
    let cursor: string | null = null;
    for (;;) {
      const rows = await semanticBatchAfter(context.knex, cursor, context.batchSize);
      if (rows.length === 0) return true;
      await index.remove({ ids: rows.map((row) => row.id) });
      cursor = rows[rows.length - 1]?.id ?? null;
    }
  } catch {
    return false;
  }
}

/**
 * Re-embeds every semantic memory with the configured embedder into a new
 * vector-index generation, then makes it the active one in one write of the
 * embedding state, and clears the replaced index.
 *
 * Restartable: memories are walked in id order and the last id done is
 * stored after every batch, so a later call with the same embedder resumes
 * there. Only one batch of rows is held in memory. Run it while no server
 * writes to the store (the CLI's `agentinfra migrate --reembed`).
 * @returns what was done and the state now stored.
 * @throws Error when the embedder fails (progress so far is kept).
 */
export async function reembedAll(
  context: ReembedContext,
  options: ReembedOptions = {},
): Promise<{ result: ReembedResult; state: EmbeddingState }> {
  const { knex, embedder } = context;
  const target = { embedderId: embedder.id, dimensions: embedder.dimensions };
  let state =
    (await readEmbeddingState(knex)) ?? (await initEmbeddingState(knex, { ...target, generation: 0, reembed: null }, context.now()));
  const pending = state.reembed;
  const resumed = pending !== null && pending.embedderId === target.embedderId && pending.dimensions === target.dimensions;
  const matches = state.embedderId === target.embedderId && state.dimensions === target.dimensions;
  if (!resumed && matches && !options.force) {
    const total = await countSemantic(knex);
    options.onProgress?.(total, total);
    return { result: { ...target, total, embedded: 0, resumed: false, previousIndexCleared: true }, state };
  }

  let progress: ReembedProgress =
    resumed && pending ? pending : { ...target, generation: Math.max(state.generation, pending?.generation ?? 0) + 1, cursor: null };
  if (!resumed) {
    state = { ...state, reembed: progress };
    await writeEmbeddingState(knex, state, context.now());
  }
  const index = context.indexOf(progress.generation);
  await index.ensure({ dimensions: progress.dimensions });

  let total = await countSemantic(knex);
  let done = progress.cursor === null ? 0 : await countSemantic(knex, progress.cursor);
  let embedded = 0;
  options.onProgress?.(done, total);
  for (;;) {
    const rows = await semanticBatchAfter(knex, progress.cursor, context.batchSize);
    if (rows.length === 0) break;
    const vectors = await embedTexts(
      embedder,
      rows.map((row) => row.text),
    );
    const items = rows.flatMap((row, i) => {
      const vector = vectors[i] as Float32Array;
      return isZeroVector(vector) ? [] : [{ id: row.id, agentId: row.agent_id, scopes: JSON.parse(row.scope) as string[], vector }];
    });
    if (items.length > 0) {
      await index.upsert({ items });
      // /mem/forget clears this index too, but a memory it forgot while the batch was being embedded has its vector
      // written back just now: removed here, or a query would find a vector without a memory.
      const stored = await storedIds(
        knex,
        items.map((item) => item.id),
      );
      const forgotten = items.filter((item) => !stored.has(item.id)).map((item) => item.id);
      if (forgotten.length > 0) await index.remove({ ids: forgotten });
    }
    progress = { ...progress, cursor: rows[rows.length - 1]?.id ?? progress.cursor };
    state = { ...state, reembed: progress };
    await writeEmbeddingState(knex, state, context.now());
    done += rows.length;
    embedded += rows.length;
    total = Math.max(total, done);
    options.onProgress?.(done, total);
  }

  const previous = context.indexOf(state.generation);
  state = { ...target, generation: progress.generation, reembed: null };
  await writeEmbeddingState(knex, state, context.now());
  const previousIndexCleared = await clearIndex(context, previous);
  return { result: { ...target, total, embedded, resumed, previousIndexCleared }, state };
}
