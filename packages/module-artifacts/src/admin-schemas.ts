import { agentIdSchema, instantSchema } from '@agentinfra/core';
import { z } from 'zod';
import { artifactIdSchema } from './field-schemas.js';
import { artifactStatusSchema, artifactViewSchema } from './schemas.js';

/**
 * Request and response bodies of agent-artifacts' operator routes (bridge
 * key only, `/admin/*`): listings across agents for the console. The admin
 * queries take and return these shapes.
 */

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page (default null: the first page). */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};

/** A grant's state as operators see it. */
export const grantStateSchema = z.enum(['active', 'expired', 'revoked']);
export type GrantState = z.output<typeof grantStateSchema>;

/** POST /admin/artifacts/list: optionally one agent's artifacts and of one status; one page. */
export const adminListArtifactsRequestSchema = z.strictObject({
  agent_id: agentIdSchema.optional(),
  status: artifactStatusSchema.optional(),
  artifact_id: artifactIdSchema.optional().describe("Only this artifact (the console's detail page): a page of one or none."),
  ...page,
});
export type AdminListArtifactsRequest = z.output<typeof adminListArtifactsRequestSchema>;
/** A page of artifacts, newest first, with their live grant counts; `next_cursor` is null on the last page. */
export const adminListArtifactsResponseSchema = z.object({
  artifacts: z.array(artifactViewSchema.extend({ agent_id: z.string(), active_grants: z.number().int() })),
  next_cursor: z.string().nullable(),
});
export type AdminListArtifactsResponse = z.output<typeof adminListArtifactsResponseSchema>;

/** POST /admin/grants/list: one page of one artifact's grants. */
export const adminListGrantsRequestSchema = z.strictObject({ artifact_id: artifactIdSchema, ...page });
export type AdminListGrantsRequest = z.output<typeof adminListGrantsRequestSchema>;
/** The artifact's owner and a page of its grants, newest first, with their state (never a token). */
export const adminListGrantsResponseSchema = z.object({
  artifact_id: z.string(),
  agent_id: z.string(),
  grants: z.array(
    z.object({
      grant_id: z.string(),
      to_agent: z.string(),
      created_at: instantSchema,
      expires_at: instantSchema,
      revoked_at: instantSchema.nullable(),
      state: grantStateSchema,
    }),
  ),
  next_cursor: z.string().nullable(),
});
export type AdminListGrantsResponse = z.output<typeof adminListGrantsResponseSchema>;

/** POST /admin/summary: no fields. */
export const adminSummaryRequestSchema = z.strictObject({});
export type AdminSummaryRequest = z.output<typeof adminSummaryRequestSchema>;
/** Service-wide counts: artifacts (committed, pending, expired), committed bytes and live grants. */
export const adminSummaryResponseSchema = z.object({
  artifacts: z.number().int(),
  committed: z.number().int(),
  pending: z.number().int(),
  expired: z.number().int(),
  committed_bytes: z.number(),
  active_grants: z.number().int(),
});
export type AdminSummaryResponse = z.output<typeof adminSummaryResponseSchema>;
