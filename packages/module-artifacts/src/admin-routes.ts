import { agentIdSchema, instantSchema, routesFor } from '@agentinfra/core';
import { z } from 'zod';
import { artifactIdSchema } from './field-schemas.js';
import type { ArtifactsPermission } from './permissions.js';
import type { ArtifactsService } from './service.js';

const route = routesFor<ArtifactsService, ArtifactsPermission>();

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page. */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};
const statusSchema = z.enum(['pending', 'committed', 'expired']);
const readOnly = { readOnly: true, idempotent: true };

/**
 * Operator routes of agent-artifacts (bridge key only): listings across
 * agents for the console. Ending grants stays on /revoke, which takes the
 * bridge key too.
 */
export const artifactsAdminRoutes = [
  route({
    path: '/admin/artifacts/list',
    summary: 'Artifacts of every agent (or one) newest first, with status, size, sha256, expiry and live grants (operators only).',
    description:
      'List artifacts across agents newest first, optionally one agent’s and of one status (pending, committed, expired): owner, key, mime, size, sha256, status, created_at, expires_at and the number of live grants. Pass next_cursor back as `cursor` for the next page.',
    example: { agent_id: 'alice', status: 'committed', limit: 50, cursor: null },
    effects: readOnly,
    request: z.strictObject({ agent_id: agentIdSchema.optional(), status: statusSchema.optional(), ...page }),
    response: z.object({
      artifacts: z.array(
        z.object({
          artifact_id: z.string(),
          agent_id: z.string(),
          key: z.string(),
          mime: z.string(),
          size: z.number(),
          sha256: z.string().nullable(),
          status: statusSchema,
          created_at: instantSchema,
          expires_at: instantSchema,
          active_grants: z.number().int(),
        }),
      ),
      next_cursor: z.string().nullable(),
    }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) =>
      service.admin.listArtifacts({ agentId: body.agent_id, status: body.status, limit: body.limit, cursor: body.cursor }),
  }),
  route({
    path: '/admin/grants/list',
    summary: 'The grants of one artifact, newest first, with state; never a token (operators only).',
    description:
      'The grants of one artifact, newest first: grant_id, to_agent, created_at, expires_at, revoked_at and state (active, expired, revoked). End an agent’s grants with /revoke.',
    example: { artifact_id: 'art_3q2ZP1kYfS5l0v8QnUu8Ww', limit: 50, cursor: null },
    effects: readOnly,
    request: z.strictObject({ artifact_id: artifactIdSchema, ...page }),
    response: z.object({
      artifact_id: z.string(),
      agent_id: z.string(),
      grants: z.array(
        z.object({
          grant_id: z.string(),
          to_agent: z.string(),
          created_at: instantSchema,
          expires_at: instantSchema,
          revoked_at: instantSchema.nullable(),
          state: z.enum(['active', 'expired', 'revoked']),
        }),
      ),
      next_cursor: z.string().nullable(),
    }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listGrants({ artifactId: body.artifact_id, limit: body.limit, cursor: body.cursor }),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of artifacts by status, bytes committed and live grants (operators only).',
    description: 'Service-wide counts for dashboards: artifacts (committed, pending, expired), committed bytes and live grants.',
    example: {},
    effects: readOnly,
    request: z.strictObject({}),
    response: z.object({
      artifacts: z.number().int(),
      committed: z.number().int(),
      pending: z.number().int(),
      expired: z.number().int(),
      committed_bytes: z.number(),
      active_grants: z.number().int(),
    }),
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
