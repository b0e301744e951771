import { routesFor } from '@agentinfra/core';
import {
  adminListArtifactsRequestSchema,
  adminListArtifactsResponseSchema,
  adminListGrantsRequestSchema,
  adminListGrantsResponseSchema,
  adminSummaryRequestSchema,
  adminSummaryResponseSchema,
} from './admin-schemas.js';
import type { ArtifactsPermission } from './permissions.js';
import type { ArtifactsService } from './service.js';

const route = routesFor<ArtifactsService, ArtifactsPermission>();

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
    request: adminListArtifactsRequestSchema,
    response: adminListArtifactsResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listArtifacts(body),
  }),
  route({
    path: '/admin/grants/list',
    summary: 'The grants of one artifact, newest first, with state; never a token (operators only).',
    description:
      'The grants of one artifact, newest first: grant_id, to_agent, created_at, expires_at, revoked_at and state (active, expired, revoked). End an agent’s grants with /revoke.',
    example: { artifact_id: 'art_3q2ZP1kYfS5l0v8QnUu8Ww', limit: 50, cursor: null },
    effects: readOnly,
    request: adminListGrantsRequestSchema,
    response: adminListGrantsResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listGrants(body),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of artifacts by status, bytes committed and live grants (operators only).',
    description: 'Service-wide counts for dashboards: artifacts (committed, pending, expired), committed bytes and live grants.',
    example: {},
    effects: readOnly,
    request: adminSummaryRequestSchema,
    response: adminSummaryResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
