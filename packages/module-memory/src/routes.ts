import { routesFor } from '@agentinfra/core';
import {
  forgetRequestSchema,
  forgetResponseSchema,
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

const route = routesFor<MemoryService>();

/** The agent named in the payload: its device key, a delegation from it with `permission`, or the bridge key. */
const agentAuth = (permission: 'memory.read' | 'memory.write' | 'memory.forget') =>
  ({ kind: 'agent', permission, agents: (body: { agent_id: string }) => [body.agent_id] }) as const;

/** agent-memory routes (SPEC.md §4 agent-memory, CONTRACT.md response shapes and bounds, plus /set/get). */
export const memoryRoutes = [
  route({
    path: '/mem/write',
    summary: 'Store a memory (episode, semantic or kv); semantic memories are embedded and indexed.',
    request: writeRequestSchema,
    response: writeResponseSchema,
    auth: agentAuth('memory.write'),
    handler: ({ body, service }) => service.write(body),
  }),
  route({
    path: '/mem/query',
    summary: 'The k semantic memories closest to q by cosine similarity among those visible under scope.',
    request: queryRequestSchema,
    response: queryResponseSchema,
    auth: agentAuth('memory.read'),
    handler: ({ body, service }) => service.query(body),
  }),
  route({
    path: '/mem/forget',
    summary: 'Delete every memory of the agent with this provenance, with its vector and set memberships.',
    request: forgetRequestSchema,
    response: forgetResponseSchema,
    auth: agentAuth('memory.forget'),
    handler: ({ body, service }) => service.forget(body),
  }),
  route({
    path: '/set/put',
    summary: 'Add and remove memory ids of a named set in one transaction; returns the set, ids sorted.',
    request: setPutRequestSchema,
    response: setResponseSchema,
    auth: agentAuth('memory.write'),
    handler: ({ body, service }) => service.setPut(body),
  }),
  route({
    path: '/set/get',
    summary: 'Read a named set of memory ids (ids sorted).',
    request: setGetRequestSchema,
    response: setResponseSchema,
    auth: agentAuth('memory.read'),
    handler: ({ body, service }) => service.setGet(body),
  }),
  route({
    path: '/kv/put',
    summary: 'Store a JSON value under a key with its visibility scopes (scope required).',
    request: kvPutRequestSchema,
    response: kvPutResponseSchema,
    auth: agentAuth('memory.write'),
    handler: ({ body, service }) => service.kvPut(body),
  }),
  route({
    path: '/kv/get',
    summary: 'Read a key; 404 when absent or stored under none of the requested scopes.',
    request: kvGetRequestSchema,
    response: kvGetResponseSchema,
    auth: agentAuth('memory.read'),
    handler: ({ body, service }) => service.kvGet(body),
  }),
];
