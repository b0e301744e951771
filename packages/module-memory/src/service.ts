import { createMemoryAdmin } from './admin-queries.js';
import { memoryConfigSchema } from './config.js';
import { createEmbedderStartup } from './embedder-startup.js';
import type { MemoryDeps } from './memory-deps.js';
import { createMemoryKv } from './memory-kv.js';
import { createMemoryQuery } from './memory-query.js';
import { createMemoryRecords } from './memory-records.js';
import { createMemorySets } from './memory-sets.js';
import type { ReembedOptions, ReembedResult } from './reembed.js';

export type { EmbeddingStatus } from './embedder-startup.js';
export type { MemoryDeps } from './memory-deps.js';

/**
 * agent-memory without HTTP (SPEC.md §4 agent-memory, CONTRACT.md shapes):
 * memories of kinds `episode`, `semantic` and `kv`, hybrid (vector +
 * full-text) search over semantic ones, forgetting by provenance, sets of
 * memory ids and scoped key/value entries. Methods take the parsed request
 * bodies (`z.output` of the route schemas: the kernel parses each body once;
 * a library caller with untyped input runs core's `parseRequest` first).
 *
 * Scopes: a record carries `self` and/or `team:<name>` entries. Writing or
 * reading under `team:<name>` requires the agent to be a member (403).
 * Each job lives in its own file: records (`memory-records.ts`), the query
 * (`memory-query.ts`), sets, kv, the embedder start-up and re-embedding
 * (`embedder-startup.ts`, `reembed.ts`).
 */
export function createMemoryService(deps: MemoryDeps) {
  const config = memoryConfigSchema.parse(deps.moduleConfig ?? {});
  const startup = createEmbedderStartup(deps, config);
  const records = createMemoryRecords(deps, config, startup);
  const { query } = createMemoryQuery(deps, config, startup);
  const sets = createMemorySets(deps);
  const kv = createMemoryKv(deps, config);
  return {
    /**
     * Start-up check, run by the module's `start` hook: records the
     * configured embedder in a fresh store, adopts it in a store without
     * semantic memories, ensures the vector index, and builds the lexical
     * index of an upgraded store (progress in the log), then removes the
     * vectors a failed or interrupted `/mem/forget` left (a failure there is
     * logged, not thrown).
     * @throws Error `the memory store was embedded with X; the server is configured with Y; run \`agentinfra migrate --reembed\``
     *   when semantic memories exist and were embedded by another embedder (id or dimensions).
     */
    async start(): Promise<void> {
      await startup.ready();
      await records.removeForgottenVectors();
    },
    /**
     * Removes the vectors still queued by forgets whose removal failed
     * (run every ten minutes by the `memory.remove-forgotten-vectors` job,
     * so a server that keeps running does not wait for the next forget or
     * start). A failure is logged, not thrown; the entries stay queued.
     */
    removeForgottenVectors: records.removeForgottenVectors,
    write: records.write,
    query,
    forget: records.forget,
    setPut: sets.setPut,
    setGet: sets.setGet,
    kvPut: kv.kvPut,
    kvGet: kv.kvGet,
    kvDelete: kv.kvDelete,
    /** Where the store's vectors stand compared with the configured embedder (read-only; works before `start`). */
    embeddingStatus: startup.status,
    /**
     * Re-embeds every semantic memory with the configured embedder (for
     * `agentinfra migrate --reembed`, after `kernel.migrate()` and without
     * `kernel.start()`, which would refuse the mismatch). Batches of
     * `memory.reembedBatchSize` rows go into a new vector-index generation
     * that becomes active only when complete; an interrupted run resumes
     * where it stopped. Does nothing when the store already matches (unless
     * `force`). Also builds the lexical index of an upgraded store. Run it
     * while no server writes to the store.
     * @returns counts and the embedder now recorded.
     * @throws Error when the embedder fails (the progress so far is kept).
     */
    reembed: (options: ReembedOptions = {}): Promise<ReembedResult> => startup.reembed(options),
    /** Listings across agents for operators (the `/admin/*` routes). */
    admin: createMemoryAdmin(deps),
  };
}

/** The agent-memory service (see {@link createMemoryService}). */
export type MemoryService = ReturnType<typeof createMemoryService>;
