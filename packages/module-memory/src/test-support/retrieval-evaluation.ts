import type { Embedder, SqlDatabase } from '@agentinfra/core';
import { seedAgentKeys, startTestKernel } from '@agentinfra/core/testing';
import { identityConfigSchema, identityModule } from '@agentinfra/module-identity';
import { memoryLexicalIndex } from '../lexical-source.js';
import { memoryModule } from '../module.js';
import type { RetrievalQuery, RetrievalSet } from './retrieval-set.js';

/** The ways of ranking memories that the retrieval evaluation compares. */
export const RETRIEVAL_MODES = ['vector', 'lexical', 'hybrid'] as const;
/** `vector`: cosine similarity only (the /mem/query of before #17); `lexical`: the full-text leg only; `hybrid`: /mem/query. */
export type RetrievalMode = (typeof RETRIEVAL_MODES)[number];

/** Memory ids, best first, per query, per mode. */
export type RetrievalRankings = Record<RetrievalMode, string[][]>;

const AGENT = 'retrieval-eval';

/**
 * Writes every memory of `set` through `/mem/write` on a fresh kernel
 * (identity + memory on `db` with `embedder`), then ranks each query three
 * ways, `depth` deep: `hybrid` is `/mem/query` itself; `lexical` is the
 * module's lexical index alone (same filter); `vector` is exact cosine
 * similarity of the same embedder's vectors over all memories. Memory ids
 * are the set's ids (carried in `provenance`). Stops the kernel (and closes
 * `db`) before returning.
 * @throws Error when a write or query does not answer 200.
 */
export async function rankRetrievalSet(options: {
  db: SqlDatabase;
  embedder: Embedder;
  set: RetrievalSet;
  queryLists: readonly (readonly RetrievalQuery[])[];
  depth?: number;
}): Promise<RetrievalRankings[]> {
  const depth = options.depth ?? 10;
  const server = await startTestKernel({
    modules: [identityModule, memoryModule],
    adapters: { sql: options.db, embedder: options.embedder },
    moduleConfigs: { 'agent-identity': identityConfigSchema.parse({}) },
    listen: false,
  });
  try {
    const { [AGENT]: key } = await seedAgentKeys(server, [AGENT]);
    const setIdOf = new Map<string, string>();
    for (const memory of options.set.memories) {
      const written = await server.call(
        'agent-memory/mem/write',
        { agent_id: AGENT, kind: 'semantic', text: memory.text, provenance: memory.id, scope: ['self'] },
        { credential: key },
      );
      if (written.status !== 200) throw new Error(`mem/write ${memory.id}: ${written.status} ${JSON.stringify(written.body)}`);
      setIdOf.set(written.body.id as string, memory.id);
    }
    const memoryVectors = await options.embedder.embed({ texts: options.set.memories.map((memory) => memory.text) });
    const lexical = memoryLexicalIndex(options.db);
    const filter = { ownerAgentId: AGENT, includeSelf: true, teamScopes: [] as string[] };
    const results: RetrievalRankings[] = [];
    for (const queries of options.queryLists) {
      const rankings: RetrievalRankings = { vector: [], lexical: [], hybrid: [] };
      const queryVectors = await options.embedder.embed({ texts: queries.map((query) => query.text) });
      for (const [index, query] of queries.entries()) {
        const answered = await server.call('agent-memory/mem/query', { agent_id: AGENT, q: query.text, k: depth }, { credential: key });
        if (answered.status !== 200) throw new Error(`mem/query ${query.id}: ${answered.status} ${JSON.stringify(answered.body)}`);
        rankings.hybrid.push((answered.body.hits as Array<{ provenance: string }>).map((hit) => hit.provenance));
        const lexicalHits = await lexical.query({ text: query.text, k: depth, filter });
        rankings.lexical.push(lexicalHits.map((hit) => setIdOf.get(hit.id) ?? hit.id));
        rankings.vector.push(cosineRanking(queryVectors[index], memoryVectors, options.set, depth));
      }
      results.push(rankings);
    }
    return results;
  } finally {
    await server.stop();
  }
}

/** The set's memory ids by descending dot product with `query` (the embedder's vectors are unit length: cosine similarity). */
function cosineRanking(query: Float32Array | undefined, memories: readonly Float32Array[], set: RetrievalSet, depth: number): string[] {
  if (query === undefined) return [];
  return memories
    .map((vector, index) => {
      let dot = 0;
      for (let i = 0; i < query.length; i += 1) dot += (query[i] ?? 0) * (vector[i] ?? 0);
      return { id: set.memories[index]?.id ?? '', dot };
    })
    .sort((a, b) => b.dot - a.dot)
    .slice(0, depth)
    .map((entry) => entry.id);
}
