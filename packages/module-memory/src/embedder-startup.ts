import { ConfigError, type VectorIndex } from '@agentinfra/core';
import type { MemoryConfig } from './config.js';
import {
  type EmbeddingState,
  initEmbeddingState,
  type ReembedProgress,
  readEmbeddingState,
  vectorTableOf,
  writeEmbeddingState,
} from './embedding-state.js';
import { memoryLexicalIndex } from './lexical-source.js';
import type { MemoryDeps } from './memory-deps.js';
import { type ReembedOptions, type ReembedResult, reembedAll } from './reembed.js';
import { countSemantic } from './semantic-records.js';

/** Where the store's vectors stand, for operators (`agentinfra migrate --reembed`, status pages). */
export interface EmbeddingStatus {
  /** Embedder the active vectors were made with (`null` before the first start). */
  storedEmbedderId: string | null;
  storedDimensions: number | null;
  /** Embedder the server is configured with. */
  configuredEmbedderId: string;
  configuredDimensions: number;
  /** Semantic memories stored. */
  semanticMemories: number;
  /** Whether `reembed` must run before the server can start. */
  reembedNeeded: boolean;
  /** An interrupted re-embed: its embedder and how far it got (`null` when none). */
  pendingReembed: { embedderId: string; done: number } | null;
}

/** Log a lexical index build's progress at most every this many rows (and at its start and end). */
const PROGRESS_LOG_ROWS = 20_000;

/**
 * The message of the start-up refusal when the store's vectors were made by another embedder.
 * @example the memory store was embedded with wordvec-sg100-q8-v1; the server is configured with openai:text-embedding-3-small@1536; …
 */
function embedderMismatchMessage(state: EmbeddingState, configured: { id: string; dimensions: number }, count: number): string {
  const pending = state.reembed;
  const resume = pending && pending.embedderId === configured.id ? ` (an interrupted re-embed with ${configured.id} will resume)` : '';
  return (
    `the memory store was embedded with ${state.embedderId} (${state.dimensions} dimensions, ${count} semantic memories); ` +
    `the server is configured with ${configured.id} (${configured.dimensions} dimensions); ` +
    `run \`agentinfra migrate --reembed\`${resume}`
  );
}

/**
 * The memory store's indexes and the embedder they were made with: the
 * start-up check (run once, on first use or by the module's start hook), the
 * vector index of the active generation, the lexical index, the operators'
 * status and the re-embed that switches embedders.
 */
export function createEmbedderStartup(deps: MemoryDeps, config: MemoryConfig) {
  const knex = () => deps.sql.knex;
  const now = () => deps.clock.now();
  const lexical = memoryLexicalIndex(deps.sql);
  const indexOf = (generation: number): VectorIndex =>
    generation === 0 ? deps.vectorIndex : deps.sql.vectorIndex({ table: vectorTableOf(generation) });
  let started: Promise<EmbeddingState> | undefined;

  /** Builds the lexical index of semantic memories written before it existed, logging progress (an upgraded store). */
  async function ensureLexical(): Promise<void> {
    let logged = -PROGRESS_LOG_ROWS;
    await lexical.ensure({
      onProgress: (done, total) => {
        if (total === 0 || (done - logged < PROGRESS_LOG_ROWS && done < total)) return;
        logged = done;
        deps.logger.info({ done, total }, `memory: lexical index ${done}/${total} semantic memories`);
      },
    });
  }

  /**
   * Records the configured embedder on first start, refuses a different one when vectors exist (a
   * configuration error: `serve` exits 2), ensures both indexes.
   */
  async function startUp(): Promise<EmbeddingState> {
    const { embedder } = deps;
    const configured = { embedderId: embedder.id, dimensions: embedder.dimensions };
    let state =
      (await readEmbeddingState(knex())) ?? (await initEmbeddingState(knex(), { ...configured, generation: 0, reembed: null }, now()));
    if (state.embedderId !== configured.embedderId || state.dimensions !== configured.dimensions) {
      const count = await countSemantic(knex());
      if (count > 0) throw new ConfigError(embedderMismatchMessage(state, embedder, count));
      const generation =
        state.dimensions === configured.dimensions ? state.generation : Math.max(state.generation, state.reembed?.generation ?? 0) + 1;
      state = { ...configured, generation, reembed: null };
      await writeEmbeddingState(knex(), state, now());
    }
    await indexOf(state.generation).ensure({ dimensions: state.dimensions });
    await ensureLexical();
    return state;
  }

  /** The active embedding state, after the start-up check (run once; a failure is retried on the next call). */
  function ready(): Promise<EmbeddingState> {
    started ??= startUp().catch((error: unknown) => {
      started = undefined;
      throw error;
    });
    return started;
  }

  /** Ensured vector indexes of interrupted re-embeds, by generation (ensured once per process). */
  const pendingIndexes = new Map<number, Promise<VectorIndex>>();
  /** The vector index `pending` builds, ensured first (a re-embed interrupted before it ensured its index left none). */
  function pendingIndexOf(pending: ReembedProgress): Promise<VectorIndex> {
    let ensured = pendingIndexes.get(pending.generation);
    if (ensured === undefined) {
      const index = indexOf(pending.generation);
      ensured = index.ensure({ dimensions: pending.dimensions }).then(
        () => index,
        (error: unknown) => {
          pendingIndexes.delete(pending.generation);
          throw error;
        },
      );
      pendingIndexes.set(pending.generation, ensured);
    }
    return ensured;
  }

  return {
    ready,
    indexOf,

    /**
     * Every vector index that may hold a memory's vector: the active one and,
     * while a re-embed is unfinished (read from `memory_meta` on each call),
     * the one it is building, which becomes active when it resumes and ends.
     */
    async vectorIndexes(): Promise<VectorIndex[]> {
      const active = indexOf((await ready()).generation);
      const pending = (await readEmbeddingState(knex()))?.reembed ?? null;
      return pending === null ? [active] : [active, await pendingIndexOf(pending)];
    },
    /** The lexical index of semantic memories (ensured by {@link ready}). */
    lexical,

    /**
     * Where the store's vectors stand compared with the configured embedder
     * (read-only; works before `start`).
     */
    async status(): Promise<EmbeddingStatus> {
      const state = await readEmbeddingState(knex());
      const semanticMemories = await countSemantic(knex());
      const { embedder } = deps;
      const matches = state === null || (state.embedderId === embedder.id && state.dimensions === embedder.dimensions);
      const pending = state?.reembed ?? null;
      let pendingReembed: EmbeddingStatus['pendingReembed'] = null;
      if (pending) {
        const done = pending.cursor === null ? 0 : await countSemantic(knex(), pending.cursor);
        pendingReembed = { embedderId: pending.embedderId, done };
      }
      return {
        storedEmbedderId: state?.embedderId ?? null,
        storedDimensions: state?.dimensions ?? null,
        configuredEmbedderId: embedder.id,
        configuredDimensions: embedder.dimensions,
        semanticMemories,
        reembedNeeded: !matches && semanticMemories > 0,
        pendingReembed,
      };
    },

    /**
     * Re-embeds every semantic memory with the configured embedder (see
     * `MemoryService.reembed`) and makes the new generation the active one.
     */
    async reembed(options: ReembedOptions = {}): Promise<ReembedResult> {
      const { result, state } = await reembedAll(
        { knex: knex(), embedder: deps.embedder, now, indexOf, batchSize: config.reembedBatchSize },
        options,
      );
      await ensureLexical();
      started = Promise.resolve(state);
      return result;
    },
  };
}

/** The store's indexes and embedder state (see {@link createEmbedderStartup}). */
export type EmbedderStartup = ReturnType<typeof createEmbedderStartup>;
