import {
  AgentInfraError,
  createGroupCommit,
  InputError,
  type ItemOutcome,
  isoTimestamp,
  type ModuleDeps,
  NotFoundError,
  newTimeOrderedId,
  type VectorIndex,
} from '@agentinfra/core';
import { type MemoryConfigInput, memoryConfigSchema } from './config.js';
import { type EmbeddingState, initEmbeddingState, readEmbeddingState, vectorTableOf, writeEmbeddingState } from './embedding-state.js';
import { type ReembedOptions, type ReembedResult, reembedAll } from './reembed.js';
import { parseRequest } from './request-validation.js';
import {
  type ForgetRequest,
  type ForgetResponse,
  forgetRequestSchema,
  type KvGetRequest,
  type KvGetResponse,
  type KvPutRequest,
  type KvPutResponse,
  kvGetRequestSchema,
  kvPutRequestSchema,
  type MemoryHit,
  type QueryRequest,
  type QueryResponse,
  queryRequestSchema,
  type SetGetRequest,
  type SetPutRequest,
  type SetResponse,
  setGetRequestSchema,
  setPutRequestSchema,
  type WriteRequest,
  type WriteResponse,
  writeRequestSchema,
} from './schemas.js';
import { assertTeamScopes, isVisible, normalizeScopes, scopeFilterOf } from './scopes.js';
import { countSemantic } from './semantic-records.js';
import { assertMaxBytes } from './size-limits.js';
import { embedTexts, isZeroVector } from './text-embedding.js';

/** Ports the memory service uses, plus the `memory` config section (defaults apply when absent). */
export type MemoryDeps = ModuleDeps<'sql' | 'vectorIndex' | 'embedder' | 'teams' | 'clock', MemoryConfigInput | undefined>;

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

interface RecordRow {
  id: string;
  agent_id: string;
  kind: string;
  text: string;
  provenance: string;
  scope: string;
  created_at: number;
}

/** Columns of `memory_records` a query returns with each hit (joined to the vector search in one statement). */
const RECORD_COLUMNS = ['agent_id', 'kind', 'text', 'provenance', 'scope', 'created_at'] as const;

/** Ids deleted or looked up per SQL statement (well under SQLite's and PostgreSQL's parameter limits). */
const ID_CHUNK = 500;
/** Most semantic writes stored in one group commit. */
const WRITE_BATCH = 64;

/** A validated semantic memory waiting for its group commit. */
interface SemanticWrite {
  row: RecordRow;
  scopes: string[];
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

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
 * agent-memory without HTTP (SPEC.md §4 agent-memory, CONTRACT.md shapes):
 * memories of kinds `episode`, `semantic` and `kv`, similarity search over
 * semantic ones, forgetting by provenance, sets of memory ids and scoped
 * key/value entries. Every method validates its input with the route's
 * schema (400 `InputError` with `details.fields`), so library and HTTP
 * callers get the same answers.
 *
 * Scopes: a record carries `self` and/or `team:<name>` entries. Writing or
 * reading under `team:<name>` requires the agent to be a member (403).
 * Semantic rows are embedded with `deps.embedder` and indexed in the
 * module's vector index with their owner and scopes.
 */
export function createMemoryService(deps: MemoryDeps) {
  const config = memoryConfigSchema.parse(deps.moduleConfig ?? {});
  const knex = () => deps.sql.knex;
  const now = () => deps.clock.now();
  const indexOf = (generation: number): VectorIndex =>
    generation === 0 ? deps.vectorIndex : deps.sql.vectorIndex({ table: vectorTableOf(generation) });

  let started: Promise<EmbeddingState> | undefined;

  /** Records the configured embedder on first start, refuses a different one when vectors exist, ensures the index. */
  async function startUp(): Promise<EmbeddingState> {
    const { embedder } = deps;
    const configured = { embedderId: embedder.id, dimensions: embedder.dimensions };
    let state =
      (await readEmbeddingState(knex())) ?? (await initEmbeddingState(knex(), { ...configured, generation: 0, reembed: null }, now()));
    if (state.embedderId !== configured.embedderId || state.dimensions !== configured.dimensions) {
      const count = await countSemantic(knex());
      if (count > 0) throw new Error(embedderMismatchMessage(state, embedder, count));
      const generation =
        state.dimensions === configured.dimensions ? state.generation : Math.max(state.generation, state.reembed?.generation ?? 0) + 1;
      state = { ...configured, generation, reembed: null };
      await writeEmbeddingState(knex(), state, now());
    }
    await indexOf(state.generation).ensure({ dimensions: state.dimensions });
    return state;
  }

  /** The active embedding state, after the start-up check (run once, on first use or by the module's start hook). */
  function ready(): Promise<EmbeddingState> {
    started ??= startUp().catch((error: unknown) => {
      started = undefined;
      throw error;
    });
    return started;
  }

  async function embedOne(text: string): Promise<Float32Array> {
    const [vector] = await embedTexts(deps.embedder, [text]);
    return vector as Float32Array;
  }

  /**
   * Stores a batch of semantic memories: one embedder call, then one
   * vector-index upsert that inserts the records in the same transaction
   * (one commit, and a failure stores neither records nor vectors). Rows
   * whose text embeds to the zero vector are stored without a vector.
   */
  async function storeSemantic(batch: readonly SemanticWrite[]): Promise<ItemOutcome<null>[]> {
    const state = await ready();
    const vectors = await embedTexts(
      deps.embedder,
      batch.map((write) => write.row.text),
    );
    const items = batch.flatMap((write, i) => {
      const vector = vectors[i] as Float32Array;
      return isZeroVector(vector) ? [] : [{ id: write.row.id, agentId: write.row.agent_id, scopes: write.scopes, vector }];
    });
    await indexOf(state.generation).upsert({ items, insert: { table: 'memory_records', rows: batch.map((write) => ({ ...write.row })) } });
    return batch.map(() => ({ ok: true, value: null }));
  }
  const semanticWrites = createGroupCommit(storeSemantic, { maxBatch: WRITE_BATCH, maxInFlight: 2 });

  async function existingIds(agentId: string, ids: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const chunk of chunks(ids, ID_CHUNK)) {
      const rows = (await knex()('memory_records').select('id').where({ agent_id: agentId }).whereIn('id', chunk)) as Array<{ id: string }>;
      for (const row of rows) found.add(row.id);
    }
    return found;
  }

  const service = {
    /**
     * Start-up check, run by the module's `start` hook: records the
     * configured embedder in a fresh store, adopts it in a store without
     * semantic memories, and ensures the vector index.
     * @throws Error `the memory store was embedded with X; the server is configured with Y; run \`agentinfra migrate --reembed\``
     *   when semantic memories exist and were embedded by another embedder (id or dimensions).
     */
    async start(): Promise<void> {
      await ready();
    },

    /**
     * Stores one memory. A `semantic` memory is embedded first and indexed
     * before its row is written; when embedding or indexing fails nothing
     * is stored. A semantic text in which the embedder finds nothing (zero
     * vector, e.g. only punctuation) is stored without a vector: it can be
     * forgotten and put in sets but matches no query.
     * @returns `{ id: 'mem_…', created_at: ISO 8601 UTC with ms }`.
     * @throws InputError (400) on a malformed body; PayloadTooLargeError (413) when `text` is over
     *   `memory.maxTextBytes` (default 32 KiB, UTF-8); NotAllowedError (403) for a `team:<name>` scope of a team
     *   the agent is not in; Error (500) when the embedder fails.
     */
    async write(input: WriteRequest): Promise<WriteResponse> {
      const body = parseRequest(writeRequestSchema, input);
      assertMaxBytes(body.text, 'text', config.maxTextBytes);
      const scopes = normalizeScopes(body.scope);
      await assertTeamScopes(deps.teams, body.agent_id, scopes);
      const createdAt = now();
      const id = newTimeOrderedId('mem_', createdAt);
      const row: RecordRow = {
        id,
        agent_id: body.agent_id,
        kind: body.kind,
        text: body.text,
        provenance: body.provenance,
        scope: JSON.stringify(scopes),
        created_at: createdAt,
      };
      if (body.kind !== 'semantic') {
        await knex()('memory_records').insert(row);
        return { id, created_at: isoTimestamp(createdAt) };
      }
      await semanticWrites.submit({ row, scopes });
      return { id, created_at: isoTimestamp(createdAt) };
    },

    /**
     * The `k` semantic memories closest to `q` by cosine similarity, best
     * first, among those visible under `scope`: with `self`, the agent's own
     * memories scoped `self`; with `team:<name>`, every memory scoped to that
     * team (any member's). Episodes and kv rows are not searched. A `q` in
     * which the embedder finds nothing (zero vector) has no hits.
     * @returns `{ hits: [{ id, text, provenance, score, agent_id, scope, created_at }] }`.
     * @throws InputError (400); PayloadTooLargeError (413) when `q` is over `memory.maxTextBytes`;
     *   NotAllowedError (403) for a team the agent is not in; Error (500) when the embedder fails.
     */
    async query(input: QueryRequest): Promise<QueryResponse> {
      const body = parseRequest(queryRequestSchema, input);
      assertMaxBytes(body.q, 'q', config.maxTextBytes);
      const scopes = normalizeScopes(body.scope);
      await assertTeamScopes(deps.teams, body.agent_id, scopes);
      const state = await ready();
      const vector = await embedOne(body.q);
      if (isZeroVector(vector)) return { hits: [] };
      const filter = scopeFilterOf(scopes);
      const found = await indexOf(state.generation).query({
        vector,
        k: body.k,
        filter: { ownerAgentId: body.agent_id, ...filter },
        attach: { table: 'memory_records', key: 'id', columns: RECORD_COLUMNS },
      });
      const hits: MemoryHit[] = [];
      for (const hit of found) {
        const row = hit.row as Omit<RecordRow, 'id'> | undefined;
        if (row?.kind !== 'semantic') continue;
        const rowScopes = JSON.parse(row.scope) as string[];
        if (!isVisible({ agentId: row.agent_id, scopes: rowScopes }, body.agent_id, filter)) continue;
        hits.push({
          id: hit.id,
          text: row.text,
          provenance: row.provenance,
          score: Number.isFinite(hit.score) ? hit.score : 0,
          agent_id: row.agent_id,
          scope: rowScopes,
          created_at: isoTimestamp(Number(row.created_at)),
        });
      }
      return { hits };
    },

    /**
     * Deletes every memory of `agent_id` whose provenance equals `provenance`
     * (all kinds), their vectors (removed first, so they stop matching
     * queries at once) and their set memberships.
     * @returns `{ deleted }`, the number of memories deleted (0 when none matched).
     * @throws InputError (400).
     */
    async forget(input: ForgetRequest): Promise<ForgetResponse> {
      const body = parseRequest(forgetRequestSchema, input);
      const rows = (await knex()('memory_records')
        .select('id', 'kind')
        .where({ agent_id: body.agent_id, provenance: body.provenance })) as Array<{ id: string; kind: string }>;
      if (rows.length === 0) return { deleted: 0 };
      const semanticIds = rows.filter((row) => row.kind === 'semantic').map((row) => row.id);
      if (semanticIds.length > 0) {
        const index = indexOf((await ready()).generation);
        for (const chunk of chunks(semanticIds, ID_CHUNK)) await index.remove({ ids: chunk });
      }
      let deleted = 0;
      await knex().transaction(async (trx) => {
        for (const chunk of chunks(
          rows.map((row) => row.id),
          ID_CHUNK,
        )) {
          deleted += await trx('memory_records').where({ agent_id: body.agent_id }).whereIn('id', chunk).delete();
        }
      });
      return { deleted };
    },

    /**
     * Creates the set `name` of `agent_id` if needed, adds `add_ids` and
     * removes `remove_ids`, in one transaction. Members must be memories the
     * agent owns; removing an id that is not a member is a no-op. Forgetting
     * a memory removes it from every set.
     * @returns `{ name, ids }`: the set after the change, ids sorted by code unit.
     * @throws InputError (400) when an id is in both lists; AgentInfraError 404 `not_found` with
     *   `details.unknown_ids` when some `add_ids` are not memories of the agent (nothing is changed).
     */
    async setPut(input: SetPutRequest): Promise<SetResponse> {
      const body = parseRequest(setPutRequestSchema, input);
      const add = [...new Set(body.add_ids)];
      const remove = [...new Set(body.remove_ids)];
      const both = add.filter((id) => remove.includes(id));
      if (both.length > 0) {
        throw new InputError('The request body does not match the schema.', {
          fields: [{ path: 'remove_ids', message: `ids also listed in add_ids: ${both.slice(0, 10).join(', ')}` }],
        });
      }
      const known = await existingIds(body.agent_id, add);
      const unknown = add.filter((id) => !known.has(id));
      if (unknown.length > 0) {
        throw new AgentInfraError(
          404,
          'not_found',
          `${unknown.length} of add_ids are not memories of agent "${body.agent_id}": ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ', …' : ''}.`,
          { details: { unknown_ids: unknown } },
        );
      }
      const at = now();
      const ids = await knex().transaction(async (trx) => {
        await trx('memory_sets')
          .insert({ agent_id: body.agent_id, name: body.name, created_at: at, updated_at: at })
          .onConflict(['agent_id', 'name'])
          .merge({ updated_at: at });
        if (add.length > 0) {
          await trx('memory_set_members')
            .insert(add.map((id) => ({ agent_id: body.agent_id, set_name: body.name, memory_id: id, added_at: at })))
            .onConflict(['agent_id', 'set_name', 'memory_id'])
            .ignore();
        }
        if (remove.length > 0) {
          await trx('memory_set_members').where({ agent_id: body.agent_id, set_name: body.name }).whereIn('memory_id', remove).delete();
        }
        const members = (await trx('memory_set_members')
          .select('memory_id')
          .where({ agent_id: body.agent_id, set_name: body.name })) as Array<{ memory_id: string }>;
        return members.map((member) => member.memory_id);
      });
      return { name: body.name, ids: ids.sort(byCodeUnit) };
    },

    /**
     * Reads the set `name` of `agent_id` (an addition to SPEC.md).
     * @returns `{ name, ids }`, ids sorted by code unit.
     * @throws InputError (400); NotFoundError (404) when the agent has no set of that name.
     */
    async setGet(input: SetGetRequest): Promise<SetResponse> {
      const body = parseRequest(setGetRequestSchema, input);
      const set = await knex()('memory_sets').select('name').where({ agent_id: body.agent_id, name: body.name }).first();
      if (!set) throw new NotFoundError(`Agent "${body.agent_id}" has no set "${body.name}".`);
      const members = (await knex()('memory_set_members')
        .select('memory_id')
        .where({ agent_id: body.agent_id, set_name: body.name })) as Array<{ memory_id: string }>;
      return { name: body.name, ids: members.map((member) => member.memory_id).sort(byCodeUnit) };
    },

    /**
     * Stores `value` (any JSON value) under `key` for `agent_id` with its
     * scopes, replacing an earlier value and scope.
     * @returns `{ key, updated_at }`.
     * @throws InputError (400); PayloadTooLargeError (413) when the JSON of `value` is over
     *   `memory.maxValueBytes` (default 64 KiB); NotAllowedError (403) for a team the agent is not in.
     */
    async kvPut(input: KvPutRequest): Promise<KvPutResponse> {
      const body = parseRequest(kvPutRequestSchema, input);
      const value = JSON.stringify(body.value);
      assertMaxBytes(value, 'value', config.maxValueBytes);
      const scopes = normalizeScopes(body.scope);
      await assertTeamScopes(deps.teams, body.agent_id, scopes);
      const at = now();
      await knex()('memory_kv')
        .insert({ agent_id: body.agent_id, key: body.key, value, scope: JSON.stringify(scopes), created_at: at, updated_at: at })
        .onConflict(['agent_id', 'key'])
        .merge({ value, scope: JSON.stringify(scopes), updated_at: at });
      return { key: body.key, updated_at: isoTimestamp(at) };
    },

    /**
     * Reads `key` of `agent_id` when its stored scope shares an entry with
     * the requested `scope` (CONTRACT.md: scope enforced on reads).
     * @returns `{ key, value, scope, updated_at }` with the stored scope.
     * @throws InputError (400); NotAllowedError (403) when a requested `team:<name>` is a team the agent is not in;
     *   NotFoundError (404) when the key is absent or stored under none of the requested scopes (the same answer).
     */
    async kvGet(input: KvGetRequest): Promise<KvGetResponse> {
      const body = parseRequest(kvGetRequestSchema, input);
      const scopes = normalizeScopes(body.scope);
      await assertTeamScopes(deps.teams, body.agent_id, scopes);
      const row = (await knex()('memory_kv')
        .select('value', 'scope', 'updated_at')
        .where({ agent_id: body.agent_id, key: body.key })
        .first()) as { value: string; scope: string; updated_at: number } | undefined;
      const stored = row ? (JSON.parse(row.scope) as string[]) : [];
      if (!row || !stored.some((scope) => scopes.includes(scope))) {
        throw new NotFoundError(`Agent "${body.agent_id}" has no kv entry "${body.key}" in the requested scopes.`);
      }
      return { key: body.key, value: JSON.parse(row.value), scope: stored, updated_at: isoTimestamp(Number(row.updated_at)) };
    },

    /**
     * Where the store's vectors stand compared with the configured embedder
     * (read-only; works before `start`).
     */
    async embeddingStatus(): Promise<EmbeddingStatus> {
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
     * Re-embeds every semantic memory with the configured embedder (for
     * `agentinfra migrate --reembed`, after `kernel.migrate()` and without
     * `kernel.start()`, which would refuse the mismatch). Batches of
     * `memory.reembedBatchSize` rows go into a new vector-index generation
     * that becomes active only when complete; an interrupted run resumes
     * where it stopped. Does nothing when the store already matches (unless
     * `force`). Run it while no server writes to the store.
     * @returns counts and the embedder now recorded.
     * @throws Error when the embedder fails (the progress so far is kept).
     */
    async reembed(options: ReembedOptions = {}): Promise<ReembedResult> {
      const { result, state } = await reembedAll(
        { knex: knex(), embedder: deps.embedder, now, indexOf, batchSize: config.reembedBatchSize },
        options,
      );
      started = Promise.resolve(state);
      return result;
    },
  };
  return service;
}

/** The agent-memory service (see {@link createMemoryService}). */
export type MemoryService = ReturnType<typeof createMemoryService>;
