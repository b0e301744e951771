import { routesFor } from '@agentinfra/core';
import type { MemoryPermission } from './permissions.js';
import {
  forgetRequestSchema,
  forgetResponseSchema,
  kvDeleteRequestSchema,
  kvDeleteResponseSchema,
  kvGetRequestSchema,
  kvGetResponseSchema,
  kvPutRequestSchema,
  kvPutResponseSchema,
  queryRequestSchema,
  queryResponseSchema,
  setGetRequestSchema,
  setPutRequestSchema,
  setResponseSchema,
  writeRequestSchema,
  writeResponseSchema,
} from './schemas.js';
import type { MemoryService } from './service.js';

const route = routesFor<MemoryService, MemoryPermission>();

/** The agent named in the payload: its device key, a delegation from it with `permission`, or the bridge key. */
const agentAuth = (permission: MemoryPermission) =>
  ({ kind: 'agent', permission, agents: (body: { agent_id: string }) => [body.agent_id] }) as const;

/** agent-memory routes (SPEC.md §4 agent-memory, CONTRACT.md response shapes and bounds, plus /set/get). */
export const memoryRoutes = [
  route({
    path: '/mem/write',
    summary: 'Store a memory (episode, semantic or kv); semantic memories are embedded and indexed.',
    description:
      'Save something the agent should remember. kind `semantic` text is embedded so /mem/query finds it by meaning later; `episode` records an event; `kv` is plain text that is not searched. `provenance` tags its origin (/mem/forget deletes by it); `scope` ["self"] keeps it private, "team:<name>" shares it with a team. Returns the new memory’s id and created_at.',
    effects: {},
    tool: 'memory_write',
    request: writeRequestSchema,
    response: writeResponseSchema,
    auth: agentAuth('memory.write'),
    handler: ({ body, service }) => service.write(body),
  }),
  route({
    path: '/mem/query',
    summary: 'The k semantic memories that best match q (vector and full-text search, fused by rank) among those visible under scope.',
    description:
      'Find the agent’s semantic memories that best match a question or phrase, by meaning (embedding similarity) and by shared words (full-text search), among those visible under `scope` (default your own). Use it before answering from memory. Returns up to k hits, best first, each with id, text, provenance, score (0 to 1, 1 = first by meaning and by words), owner agent_id and scope.',
    effects: { readOnly: true, idempotent: true },
    tool: 'memory_query',
    request: queryRequestSchema,
    response: queryResponseSchema,
    auth: agentAuth('memory.read'),
    handler: ({ body, service }) => service.query(body),
  }),
  route({
    path: '/mem/forget',
    summary: 'Delete every memory of the agent with this provenance, with its vector and set memberships.',
    description:
      'Delete every memory of the agent with this provenance tag, with its vectors and set memberships. Use it to retract what one source taught you. Returns how many memories were deleted. Cannot be undone.',
    effects: { destructive: true, idempotent: true },
    tool: 'memory_forget',
    request: forgetRequestSchema,
    response: forgetResponseSchema,
    auth: agentAuth('memory.forget'),
    handler: ({ body, service }) => service.forget(body),
  }),
  route({
    path: '/set/put',
    summary: 'Add and remove memory ids of a named set in one transaction; returns the set, ids sorted.',
    description:
      'Add and remove memory ids in a named set (a hand-kept collection such as "favourites") in one step. Returns the set’s name and its member ids after the change, sorted.',
    effects: { destructive: true, idempotent: true },
    request: setPutRequestSchema,
    response: setResponseSchema,
    auth: agentAuth('memory.write'),
    handler: ({ body, service }) => service.setPut(body),
  }),
  route({
    path: '/set/get',
    summary: 'Read a named set of memory ids (ids sorted).',
    description: 'Read a named set of memory ids. Returns the set’s name and member ids, sorted; not_found when the set does not exist.',
    effects: { readOnly: true, idempotent: true },
    request: setGetRequestSchema,
    response: setResponseSchema,
    auth: agentAuth('memory.read'),
    handler: ({ body, service }) => service.setGet(body),
  }),
  route({
    path: '/kv/put',
    summary: 'Store a JSON value under a key with its visibility scopes (scope required).',
    description:
      'Store a JSON value under a key (a named fact or a small piece of state), replacing any previous value, visible under `scope`. Returns the key and updated_at.',
    effects: { destructive: true, idempotent: true },
    request: kvPutRequestSchema,
    response: kvPutResponseSchema,
    auth: agentAuth('memory.write'),
    handler: ({ body, service }) => service.kvPut(body),
  }),
  route({
    path: '/kv/get',
    summary: 'Read a key; 404 when absent or stored under none of the requested scopes.',
    description:
      'Read the JSON value stored under a key, if it is visible under one of the requested scopes. Returns key, value, scope and updated_at; not_found when absent.',
    effects: { readOnly: true, idempotent: true },
    request: kvGetRequestSchema,
    response: kvGetResponseSchema,
    auth: agentAuth('memory.read'),
    handler: ({ body, service }) => service.kvGet(body),
  }),
  route({
    path: '/kv/delete',
    summary: 'Delete a key of the agent (an addition); answers { deleted: 0 } when there was none.',
    description:
      'Delete the value stored under a key, whatever its scope, freeing room under the agent’s kv quota. Returns how many keys were deleted (0 or 1). Cannot be undone.',
    effects: { destructive: true, idempotent: true },
    request: kvDeleteRequestSchema,
    response: kvDeleteResponseSchema,
    auth: agentAuth('memory.forget'),
    handler: ({ body, service }) => service.kvDelete(body),
  }),
];
