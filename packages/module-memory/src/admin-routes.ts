import { routesFor } from '@agentinfra/core';
import {
  adminListMemoriesRequestSchema,
  adminListMemoriesResponseSchema,
  adminListProvenancesRequestSchema,
  adminListProvenancesResponseSchema,
  adminSummaryRequestSchema,
  adminSummaryResponseSchema,
} from './admin-schemas.js';
import type { MemoryPermission } from './permissions.js';
import type { MemoryService } from './service.js';

const route = routesFor<MemoryService, MemoryPermission>();

const readOnly = { readOnly: true, idempotent: true };

/**
 * Operator routes of agent-memory (bridge key only): browsing memories
 * across agents for the console. Semantic search and forgetting stay on
 * /mem/query and /mem/forget, which take the bridge key too.
 */
export const memoryAdminRoutes = [
  route({
    path: '/admin/memories/list',
    summary: 'Memories newest first, filtered by agent, kind and provenance; text cut at 500 characters (operators only).',
    description:
      'Browse stored memories newest first, optionally one agent’s, one kind (episode, semantic, kv) and one provenance tag. Each has id, agent_id, kind, text (at most 500 characters; text_truncated says when cut), provenance, scope and created_at. Pass next_cursor back as `cursor` for the next page.',
    example: { agent_id: 'alice', kind: 'semantic', limit: 50, cursor: null },
    effects: readOnly,
    request: adminListMemoriesRequestSchema,
    response: adminListMemoriesResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listMemories(body),
  }),
  route({
    path: '/admin/provenances/list',
    summary: 'An agent’s provenance tags with how many memories carry each (operators only).',
    description:
      'The provenance tags of an agent’s memories in code-point order, with the number of memories carrying each: what /mem/forget would delete. Pass next_cursor back as `cursor` for the next page.',
    example: { agent_id: 'alice', limit: 50, cursor: null },
    effects: readOnly,
    request: adminListProvenancesRequestSchema,
    response: adminListProvenancesResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listProvenances(body),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of memories, in total and by kind (operators only).',
    description: 'Service-wide counts for dashboards: memories in total and by kind.',
    example: {},
    effects: readOnly,
    request: adminSummaryRequestSchema,
    response: adminSummaryResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
