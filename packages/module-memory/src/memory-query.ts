import { isoTimestamp, type LexicalHit, nextIoTurn, type VectorHit } from '@agentinfra/core';
import { rankingsToFuse } from './candidate-alignment.js';
import type { MemoryConfig } from './config.js';
import type { EmbedderStartup } from './embedder-startup.js';
import type { MemoryDeps } from './memory-deps.js';
import type { RecordRow } from './memory-records.js';
import { createQueryBulkhead, QUERY_CANDIDATE_BUDGET } from './query-bulkhead.js';
import { FUSION_EXTRA_CANDIDATES, fuseRankings } from './rank-fusion.js';
import type { MemoryHit, QueryRequest, QueryResponse } from './schemas.js';
import { assertTeamScopes, isVisible, normalizeScopes, scopeFilterOf } from './scopes.js';
import { assertMaxBytes } from './size-limits.js';
import { embedTexts, isZeroVector } from './text-embedding.js';

/** Columns of `memory_records` each leg returns with its hits (joined in the leg's SQL statement). */
const RECORD_COLUMNS = ['agent_id', 'kind', 'text', 'provenance', 'scope', 'created_at'] as const;
const ATTACH = { table: 'memory_records', key: 'id', columns: RECORD_COLUMNS };

/**
 * The hits of a leg whose memory is stored (the attached row exists), in
 * their order: a vector whose memory `/mem/forget` has just deleted (it
 * removes vectors after the records' transaction) takes no rank or place.
 */
function stored<H extends VectorHit | LexicalHit>(hits: readonly H[]): H[] {
  return hits.filter((hit) => hit.row !== undefined);
}

/**
 * Hybrid search over semantic memories (`/mem/query`): a vector leg (cosine
 * similarity of the embedded `q`, the module's `VectorIndex`) and a lexical
 * leg (full-text match of `q`'s words, the module's `LexicalIndex`), each
 * filtered by visibility in its own SQL statement before ranking. Their
 * candidates are re-ranked by the embedder's word alignment when it has one,
 * else the two rankings are fused by reciprocal rank ({@link rankingsToFuse},
 * {@link fuseRankings}); `k` is applied last. The lexical
 * leg starts after the loop polled for I/O once ({@link nextIoTurn}), so on
 * SQLite, where each leg's statements run synchronously, the two legs never
 * hold the event loop in one stretch. Searches share
 * {@link QUERY_CANDIDATE_BUDGET} candidate rows: a query waits while the
 * others hold too many, each agent's in arrival order, the agents in turn.
 */
export function createMemoryQuery(deps: MemoryDeps, config: MemoryConfig, startup: EmbedderStartup) {
  const bulkhead = createQueryBulkhead(QUERY_CANDIDATE_BUDGET);
  return {
    /**
     * The `k` semantic memories that best match `q`, best first, among those
     * visible under `scope`: with `self`, the agent's own memories scoped
     * `self`; with `team:<name>`, every memory scoped to that team (any
     * member's). Each leg returns its best `k + 10` visible memories; the
     * fused score is in (0, 1] (1: first in both legs), non-increasing down
     * the list. Episodes and kv rows are not searched. A `q` with neither a
     * word the embedder knows nor a word outside the English stop words has
     * no hits.
     * @returns `{ hits: [{ id, text, provenance, score, agent_id, scope, created_at }] }`.
     * @throws PayloadTooLargeError (413) when `q` is over `memory.maxTextBytes`; NotAllowedError (403) for a team the
     *   agent is not in; Error (500) when the embedder fails.
     */
    async query(input: QueryRequest): Promise<QueryResponse> {
      assertMaxBytes(input.q, 'q', config.maxTextBytes);
      const scopes = normalizeScopes(input.scope);
      await assertTeamScopes(deps.teams, input.agent_id, scopes);
      const candidates = input.k + FUSION_EXTRA_CANDIDATES;
      return bulkhead.run(input.agent_id, candidates, () => search(input, scopes, candidates));
    },
  };

  /** The search itself, reading `candidates` rows per leg (the units it holds in the bulkhead). */
  async function search(input: QueryRequest, scopes: ReturnType<typeof normalizeScopes>, candidates: number): Promise<QueryResponse> {
    const state = await startup.ready();
    const [vector] = await embedTexts(deps.embedder, [input.q]);
    const filter = { ownerAgentId: input.agent_id, ...scopeFilterOf(scopes) };
    const [vectorHits, lexicalHits] = await Promise.all([
      vector === undefined || isZeroVector(vector)
        ? ([] as VectorHit[])
        : startup.indexOf(state.generation).query({ vector, k: candidates, filter, attach: ATTACH }),
      // On SQLite both legs run synchronously: with a turn for I/O between them, their stalls do not add up.
      nextIoTurn().then(() => startup.lexical.query({ text: input.q, k: candidates, filter, attach: ATTACH })),
    ]);
    const rankings = await rankingsToFuse(deps.embedder, input.q, stored(vectorHits), stored(lexicalHits));
    const hits: MemoryHit[] = [];
    for (const fused of fuseRankings<VectorHit | LexicalHit>(rankings, input.k)) {
      const row = fused.hits.find((hit) => hit?.row !== undefined)?.row as Omit<RecordRow, 'id'> | undefined;
      if (row?.kind !== 'semantic') continue;
      const rowScopes = JSON.parse(row.scope) as string[];
      if (!isVisible({ agentId: row.agent_id, scopes: rowScopes }, input.agent_id, filter)) continue;
      hits.push({
        id: fused.id,
        text: row.text,
        provenance: row.provenance,
        score: fused.score,
        agent_id: row.agent_id,
        scope: rowScopes,
        created_at: isoTimestamp(Number(row.created_at)),
      });
    }
    return { hits };
  }
}
