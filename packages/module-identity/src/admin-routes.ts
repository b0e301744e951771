import { routesFor } from '@agentinfra/core';
import {
  adminAgentPageRequestSchema,
  adminGetAgentRequestSchema,
  adminGetAgentResponseSchema,
  adminListAgentsRequestSchema,
  adminListAgentsResponseSchema,
  adminListDelegationsResponseSchema,
  adminListDevicesResponseSchema,
  adminSummaryRequestSchema,
  adminSummaryResponseSchema,
} from './admin-schemas.js';
import type { IdentityPermission } from './permissions.js';
import type { IdentityService } from './service.js';

const route = routesFor<IdentityService, IdentityPermission>();

const readOnly = { readOnly: true, idempotent: true };

/**
 * Operator routes of agent-identity (bridge key only): the listings across
 * agents the console shows. They read; creating agents, issuing and
 * revoking devices and delegations stay on the ordinary routes.
 */
export const identityAdminRoutes = [
  route({
    path: '/admin/agents/list',
    summary: 'List agents in id order, optionally those whose id or display name contains `query` (operators only).',
    description:
      'List every agent in id order with display name, creation time and number of active devices; `query` keeps those whose id or display name contains it (case-insensitive). Pass next_cursor back as `cursor` for the next page (null on the last).',
    example: { query: 'alice', limit: 50, cursor: null },
    effects: readOnly,
    request: adminListAgentsRequestSchema,
    response: adminListAgentsResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listAgents(body),
  }),
  route({
    path: '/admin/agents/get',
    summary: 'One agent with its teams and counts of active devices, active delegations and secrets (operators only).',
    description:
      'One agent: display name, creation time, the teams it belongs to, and how many active devices, active delegations (from or to it) and secrets it has. not_found when it does not exist.',
    example: { agent_id: 'alice' },
    effects: readOnly,
    request: adminGetAgentRequestSchema,
    response: adminGetAgentResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.getAgent(body),
  }),
  route({
    path: '/admin/devices/list',
    summary: 'An agent’s devices, newest first, with label, expiry and state; never a key (operators only).',
    description:
      'The devices of an agent, newest first: device_id, label, created_at, expires_at, revoked_at and state (active, expired, revoked). Keys are never shown again after /device/issue. Revoke one with /device/revoke.',
    example: { agent_id: 'alice', limit: 50, cursor: null },
    effects: readOnly,
    request: adminAgentPageRequestSchema,
    response: adminListDevicesResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listDevices(body),
  }),
  route({
    path: '/admin/delegations/list',
    summary: 'Delegations from or to an agent, newest first, with scope, expiry and state; never a token (operators only).',
    description:
      'The delegations an agent gave or received, newest first: delegation_id, from_agent, to_agent, scope, created_at, expires_at, revoked_at and state. End one with /delegate/revoke.',
    example: { agent_id: 'alice', limit: 50, cursor: null },
    effects: readOnly,
    request: adminAgentPageRequestSchema,
    response: adminListDelegationsResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listDelegations(body),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of agents, active devices and active delegations (operators only).',
    description: 'Service-wide counts for dashboards: agents, active devices and active delegations.',
    example: {},
    effects: readOnly,
    request: adminSummaryRequestSchema,
    response: adminSummaryResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
