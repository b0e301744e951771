import { chunks, createGroupCommit, type ItemOutcome, isoTimestamp, newTimeOrderedId, SQL_ID_CHUNK } from '@agentinfra/core';
import type { MemoryConfig } from './config.js';
import type { EmbedderStartup } from './embedder-startup.js';
import { queueVectorRemovals, removeQueuedVectors } from './forgotten-vectors.js';
import type { MemoryDeps } from './memory-deps.js';
import { lockOwnMemories } from './record-locks.js';
import { createRowQuota } from './row-quota.js';
import type { ForgetRequest, ForgetResponse, WriteRequest, WriteResponse } from './schemas.js';
import { assertTeamScopes, normalizeScopes } from './scopes.js';
import { assertMaxBytes } from './size-limits.js';
import { embedTexts, isZeroVector } from './text-embedding.js';

/** A `memory_records` row. */
export interface RecordRow {
  id: string;
  agent_id: string;
  kind: string;
  text: string;
  provenance: string;
  /** JSON array of the normalized scopes. */
  scope: string;
  created_at: number;
}

/** Most writes (semantic memories, or episodes) stored in one group commit. */
const WRITE_BATCH = 64;

/** A validated semantic memory waiting for its group commit. */
interface SemanticWrite {
  row: RecordRow;
  scopes: string[];
}

/**
 * Writing and forgetting memories (`/mem/write`, `/mem/forget`). A semantic
 * record, its vector and its lexical entry are stored in one transaction:
 * the record goes in with the vectors (`VectorIndex.upsert` with `insert`)
 * and the lexical index follows the records table by trigger. Forgetting
 * runs the other way: records (and lexical entries) first, in a transaction
 * that queues their vectors' removal, then the vectors; so a vector may
 * briefly outlive its record, never the reverse.
 */
export function createMemoryRecords(deps: MemoryDeps, config: MemoryConfig, startup: EmbedderStartup) {
  const knex = () => deps.sql.knex;
  const quota = createRowQuota({
    knex,
    table: 'memory_records',
    setting: 'memory_max_records_per_agent',
    what: 'memories',
    release: 'forget some with /mem/forget first',
    settings: () => deps.settings,
    clock: deps.clock,
  });

  /**
   * Stores a batch of semantic memories: one embedder call, then one
   * vector-index upsert that inserts the records in the same transaction
   * (one commit, and a failure stores neither records nor vectors). Rows
   * whose text embeds to the zero vector are stored without a vector.
   */
  async function storeSemantic(batch: readonly SemanticWrite[]): Promise<ItemOutcome<null>[]> {
    const state = await startup.ready();
    const vectors = await embedTexts(
      deps.embedder,
      batch.map((write) => write.row.text),
    );
    const items = batch.flatMap((write, i) => {
      const vector = vectors[i] as Float32Array;
      return isZeroVector(vector) ? [] : [{ id: write.row.id, agentId: write.row.agent_id, scopes: write.scopes, vector }];
    });
    await startup
      .indexOf(state.generation)
      .upsert({ items, insert: { table: 'memory_records', rows: batch.map((write) => ({ ...write.row })) } });
    return batch.map(() => ({ ok: true, value: null }));
  }
  const semanticWrites = createGroupCommit(storeSemantic, { maxBatch: WRITE_BATCH, maxInFlight: 2 });

  /**
   * Stores a batch of episodes (memories that are neither embedded nor
   * indexed) with one multi-row insert: one commit for all of them.
   */
  async function storeEpisodes(batch: readonly RecordRow[]): Promise<ItemOutcome<null>[]> {
    await knex()('memory_records').insert([...batch]);
    return batch.map(() => ({ ok: true, value: null }));
  }
  const episodeWrites = createGroupCommit(storeEpisodes, { maxBatch: WRITE_BATCH, maxInFlight: 2 });

  /**
   * Removes the queued vectors of forgotten memories from every index that
   * may hold them ({@link removeQueuedVectors}): those of `options.only`
   * after a forget, else the queue's backlog, at start and every ten minutes
   * (the module's job) for those a failed or interrupted forget left. A
   * failure is logged and leaves them queued for the next call; their
   * memories are already gone, so they match no query meanwhile. Once
   * `signal` (the job's) aborts, it stops between chunks and throws the
   * signal's reason.
   */
  async function removeForgottenVectors(options: { only?: readonly string[]; signal?: AbortSignal } = {}): Promise<void> {
    try {
      await removeQueuedVectors(knex(), await startup.vectorIndexes(), {
        ...options,
        onRefused: (error, refused) =>
          deps.logger.warn(
            { err: error, refused },
            'memory: a vector index refused to remove the vectors of forgotten memories; they stay queued',
          ),
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      deps.logger.warn({ err: error }, 'memory: could not remove the vectors of forgotten memories; they stay queued and are retried');
    }
  }

  return {
    /**
     * Stores one memory. A `semantic` memory is embedded first, then its row,
     * vector and lexical entry are stored in one transaction; when embedding
     * or storing fails nothing is stored. A semantic text in which the
     * embedder finds nothing (zero vector, e.g. only punctuation) is stored
     * without a vector. Writes arriving together share one transaction (a
     * group commit per kind); each answers only after its own commit.
     * @returns `{ id: 'mem_…', created_at: ISO 8601 UTC with ms }`.
     * @throws PayloadTooLargeError (413) when `text` is over `memory.maxTextBytes` (UTF-8); NotAllowedError (403) for a
     *   `team:<name>` scope of a team the agent is not in; ConflictError (409) when the agent holds its quota of
     *   memories (setting `memory_max_records_per_agent`); Error (500) when the embedder fails.
     */
    async write(input: WriteRequest): Promise<WriteResponse> {
      assertMaxBytes(input.text, 'text', config.maxTextBytes);
      const scopes = normalizeScopes(input.scope);
      await assertTeamScopes(deps.teams, input.agent_id, scopes);
      const createdAt = deps.clock.now();
      const id = newTimeOrderedId('mem_', createdAt);
      const row: RecordRow = {
        id,
        agent_id: input.agent_id,
        kind: input.kind,
        text: input.text,
        provenance: input.provenance,
        scope: JSON.stringify(scopes),
        created_at: createdAt,
      };
      await quota.insert(input.agent_id, async () => {
        if (input.kind === 'semantic') await semanticWrites.submit({ row, scopes });
        else await episodeWrites.submit(row);
        return true;
      });
      return { id, created_at: isoTimestamp(createdAt) };
    },

    /**
     * Deletes every memory of `agent_id` whose provenance equals `provenance`
     * (all kinds) with their lexical entries (by trigger) and set memberships
     * in one transaction, which also queues the removal of their vectors
     * ({@link queueVectorRemovals}); after it commits, its vectors are removed
     * from the active index and from that of an unfinished re-embed. A vector
     * outlives its memory only until then (or, when that removal fails, until
     * the next start or run of the `memory.remove-forgotten-vectors` job retries it) and matches no query meanwhile:
     * `/mem/query` drops hits without a stored memory before ranking.
     * @returns `{ deleted }`, the number of memories deleted (0 when none matched).
     */
    async forget(input: ForgetRequest): Promise<ForgetResponse> {
      const rows = (await knex()('memory_records')
        .select('id', 'kind')
        .where({ agent_id: input.agent_id, provenance: input.provenance })) as Array<{ id: string; kind: string }>;
      if (rows.length === 0) return { deleted: 0 };
      const semanticIds = new Set(rows.filter((row) => row.kind === 'semantic').map((row) => row.id));
      let deleted = 0;
      let forgotten: string[] = [];
      await knex().transaction(async (trx) => {
        const locked = await lockOwnMemories(
          deps.sql,
          trx,
          input.agent_id,
          rows.map((row) => row.id),
        );
        for (const chunk of chunks([...locked], SQL_ID_CHUNK)) {
          deleted += await trx('memory_records').where({ agent_id: input.agent_id }).whereIn('id', chunk).delete();
        }
        forgotten = [...locked].filter((id) => semanticIds.has(id));
        await queueVectorRemovals(trx, forgotten);
      });
      quota.release(input.agent_id, deleted);
      // A running re-embed that wrote one of these vectors into its index before this loses it here; one that
      // writes it later finds the memory gone and removes the vector itself.
      await removeForgottenVectors({ only: forgotten });
      return { deleted };
    },

    removeForgottenVectors,
  };
}
