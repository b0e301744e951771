import { agentIdSchema, instantSchema, routesFor } from '@agentinfra/core';
import { z } from 'zod';
import type { MemoryPermission } from './permissions.js';
import { memoryKindSchema, provenanceSchema } from './schemas.js';
import type { MemoryService } from './service.js';

const route = routesFor<MemoryService, MemoryPermission>();

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page. */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};
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
    request: z.strictObject({
      agent_id: agentIdSchema.optional(),
      kind: memoryKindSchema.optional(),
      provenance: provenanceSchema.optional(),
      ...page,
    }),
    response: z.object({
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
    }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) =>
      service.admin.listMemories({
        agentId: body.agent_id,
        kind: body.kind,
        provenance: body.provenance,
        limit: body.limit,
        cursor: body.cursor,
      }),
  }),
  route({
    path: '/admin/provenances/list',
    summary: 'An agent’s provenance tags with how many memories carry each (operators only).',
    description:
      'The provenance tags of an agent’s memories in code-point order, with the number of memories carrying each: what /mem/forget would delete. Pass next_cursor back as `cursor` for the next page.',
    example: { agent_id: 'alice', limit: 50, cursor: null },
    effects: readOnly,
    request: z.strictObject({ agent_id: agentIdSchema, ...page }),
    response: z.object({
      provenances: z.array(z.object({ provenance: z.string(), memories: z.number().int() })),
      next_cursor: z.string().nullable(),
    }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listProvenances({ agentId: body.agent_id, limit: body.limit, cursor: body.cursor }),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of memories, in total and by kind (operators only).',
    description: 'Service-wide counts for dashboards: memories in total and by kind.',
    example: {},
    effects: readOnly,
    request: z.strictObject({}),
    response: z.object({
      memories: z.number().int(),
      by_kind: z.object({ episode: z.number().int(), semantic: z.number().int(), kv: z.number().int() }),
    }),
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
