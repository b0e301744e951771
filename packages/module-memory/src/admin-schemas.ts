import { agentIdSchema, instantSchema } from '@agentinfra/core';
import { z } from 'zod';
import { memoryKindSchema, provenanceSchema } from './schemas.js';

/**
 * Request and response bodies of agent-memory's operator routes (bridge key
 * only, `/admin/*`): browsing memories across agents for the console. The
 * admin queries take and return these shapes.
 */

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page (default null: the first page). */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};

/** POST /admin/memories/list: optionally one agent's memories, of one kind, with one provenance tag; one page. */
export const adminListMemoriesRequestSchema = z.strictObject({
  agent_id: agentIdSchema.optional(),
  kind: memoryKindSchema.optional(),
  provenance: provenanceSchema.optional(),
  ...page,
});
export type AdminListMemoriesRequest = z.output<typeof adminListMemoriesRequestSchema>;
/**
 * A page of memories, newest first; `text` is cut at 500 characters
 * (`text_truncated` says when); `next_cursor` is null on the last page.
 */
export const adminListMemoriesResponseSchema = z.object({
  memories: z.array(
    z.object({
      id: z.string(),
      agent_id: z.string(),
      kind: memoryKindSchema,
      text: z.string(),
      text_truncated: z.boolean(),
      provenance: z.string(),
      scope: z.array(z.string()),
      created_at: instantSchema,
    }),
  ),
  next_cursor: z.string().nullable(),
});
export type AdminListMemoriesResponse = z.output<typeof adminListMemoriesResponseSchema>;

/** POST /admin/provenances/list: one page of one agent's provenance tags. */
export const adminListProvenancesRequestSchema = z.strictObject({ agent_id: agentIdSchema, ...page });
export type AdminListProvenancesRequest = z.output<typeof adminListProvenancesRequestSchema>;
/** A page of provenance tags in code-point order, with the number of memories carrying each. */
export const adminListProvenancesResponseSchema = z.object({
  provenances: z.array(z.object({ provenance: z.string(), memories: z.number().int() })),
  next_cursor: z.string().nullable(),
});
export type AdminListProvenancesResponse = z.output<typeof adminListProvenancesResponseSchema>;

/** POST /admin/summary: no fields. */
export const adminSummaryRequestSchema = z.strictObject({});
export type AdminSummaryRequest = z.output<typeof adminSummaryRequestSchema>;
/** Service-wide counts: memories in total and by kind. */
export const adminSummaryResponseSchema = z.object({
  memories: z.number().int(),
  by_kind: z.object({ episode: z.number().int(), semantic: z.number().int(), kv: z.number().int() }),
});
export type AdminSummaryResponse = z.output<typeof adminSummaryResponseSchema>;
