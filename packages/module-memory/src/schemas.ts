import { agentIdSchema, instantSchema, scopeEntrySchema } from '@agentinfra/core';
import { z } from 'zod';
import { jsonValueSchema } from './json-value.js';

/**
 * Request and response bodies of agent-memory (SPEC.md §4 agent-memory,
 * CONTRACT.md response shapes and bounds). The service takes and returns
 * these shapes, so HTTP and library callers see the same thing.
 */

/** Kinds of memory (SPEC.md §2): only `semantic` rows are embedded and searchable by /mem/query. */
export const memoryKindSchema = z.enum(['episode', 'semantic', 'kv']);
/** A memory kind. */
export type MemoryKind = z.infer<typeof memoryKindSchema>;

/** Visibility scopes of a record: 1–32 entries `self` or `team:<name>` (duplicates are ignored). */
export const scopeListSchema = z
  .array(scopeEntrySchema)
  .min(1)
  .max(32)
  .describe('Visibility scopes: "self" and/or "team:<name>" (1–32 entries). A team scope requires membership (403).');

/** A provenance tag: 1–256 characters. */
export const provenanceSchema = z.string().min(1).max(256).describe('Origin tag of the memory; /mem/forget deletes by it.');

/** A memory id as returned by /mem/write (`mem_…`). */
export const memoryIdSchema = z.string().min(1).max(64);

/** A set name: 1–128 characters. */
export const setNameSchema = z.string().min(1).max(128);

/** A kv key: 1–256 characters. */
export const kvKeySchema = z.string().min(1).max(256);

/** POST /mem/write. */
export const writeRequestSchema = z.strictObject({
  agent_id: agentIdSchema,
  kind: memoryKindSchema,
  /** Memory content, 1 character to `memory.maxTextBytes` UTF-8 bytes (default 32 KiB; 413 above). */
  text: z.string().min(1).describe('Memory content: at least 1 character, at most 32 KiB of UTF-8 by default (413 above).'),
  provenance: provenanceSchema,
  scope: scopeListSchema,
});
export type WriteRequest = z.output<typeof writeRequestSchema>;
export const writeResponseSchema = z.object({ id: z.string(), created_at: instantSchema });
export type WriteResponse = z.output<typeof writeResponseSchema>;

/** POST /mem/query. `k` defaults to 10 (1..100); `scope` defaults to `["self"]`. */
export const queryRequestSchema = z.strictObject({
  agent_id: agentIdSchema,
  q: z
    .string()
    .min(1)
    .refine((value) => value.trim().length > 0, 'must not be blank')
    .describe('Query text (not blank; at most 32 KiB of UTF-8 by default, 413 above).'),
  k: z.number().int().min(1).max(100).default(10).describe('Number of hits wanted: 1..100, default 10.'),
  scope: scopeListSchema.default(['self']).describe('Scopes to search: default ["self"]; "team:<name>" requires membership (403).'),
});
export type QueryRequest = z.output<typeof queryRequestSchema>;
/** One hit: the SPEC.md fields plus `agent_id` (owner, useful for team hits), `scope` and `created_at` (additions). */
export const memoryHitSchema = z.object({
  id: z.string(),
  text: z.string(),
  provenance: z.string(),
  score: z.number(),
  agent_id: z.string(),
  scope: z.array(z.string()),
  created_at: instantSchema,
});
export type MemoryHit = z.output<typeof memoryHitSchema>;
export const queryResponseSchema = z.object({ hits: z.array(memoryHitSchema) });
export type QueryResponse = z.output<typeof queryResponseSchema>;

/** POST /mem/forget: deletes every memory of `agent_id` with this provenance. */
export const forgetRequestSchema = z.strictObject({ agent_id: agentIdSchema, provenance: provenanceSchema });
export type ForgetRequest = z.output<typeof forgetRequestSchema>;
export const forgetResponseSchema = z.object({ deleted: z.number().int().min(0) });
export type ForgetResponse = z.output<typeof forgetResponseSchema>;

/** POST /set/put: 0–1000 ids to add and 0–1000 to remove (both default to empty). */
export const setPutRequestSchema = z.strictObject({
  agent_id: agentIdSchema,
  name: setNameSchema,
  add_ids: z
    .array(memoryIdSchema)
    .max(1000)
    .default([])
    .describe("Ids of the agent's own memories to add (unknown ids: 404 with details.unknown_ids, nothing changed)."),
  remove_ids: z.array(memoryIdSchema).max(1000).default([]).describe('Ids to remove; ids that are not members are ignored.'),
});
export type SetPutRequest = z.output<typeof setPutRequestSchema>;
/** A set after a change: member ids sorted by code unit. */
export const setResponseSchema = z.object({ name: z.string(), ids: z.array(z.string()) });
export type SetResponse = z.output<typeof setResponseSchema>;

/** POST /set/get (an addition). */
export const setGetRequestSchema = z.strictObject({ agent_id: agentIdSchema, name: setNameSchema });
export type SetGetRequest = z.output<typeof setGetRequestSchema>;

/** POST /kv/put: `value` is any JSON value (null included); `scope` is required. */
export const kvPutRequestSchema = z.strictObject({
  agent_id: agentIdSchema,
  key: kvKeySchema,
  value: jsonValueSchema.describe('Any JSON value, at most 64 KiB serialized by default (413 above).'),
  scope: scopeListSchema,
});
export type KvPutRequest = z.output<typeof kvPutRequestSchema>;
export const kvPutResponseSchema = z.object({ key: z.string(), updated_at: instantSchema });
export type KvPutResponse = z.output<typeof kvPutResponseSchema>;

/** POST /kv/get: `scope` lists the scopes the caller reads under; the stored scope must share one. */
export const kvGetRequestSchema = z.strictObject({ agent_id: agentIdSchema, key: kvKeySchema, scope: scopeListSchema });
export type KvGetRequest = z.output<typeof kvGetRequestSchema>;
export const kvGetResponseSchema = z.object({
  key: z.string(),
  value: jsonValueSchema,
  scope: z.array(z.string()),
  updated_at: instantSchema,
});
export type KvGetResponse = z.output<typeof kvGetResponseSchema>;

/** POST /kv/delete (an addition): removes one key of the agent, whatever its scope. */
export const kvDeleteRequestSchema = z.strictObject({ agent_id: agentIdSchema, key: kvKeySchema });
export type KvDeleteRequest = z.output<typeof kvDeleteRequestSchema>;
export const kvDeleteResponseSchema = z.object({ deleted: z.number().int().min(0).max(1) });
export type KvDeleteResponse = z.output<typeof kvDeleteResponseSchema>;
