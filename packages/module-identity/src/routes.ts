import { agentIdSchema, instantSchema, permissionNameSchema, routesFor, teamNameSchema, timestampSchema } from '@agentinfra/core';
import { z } from 'zod';
import type { IdentityPermission } from './permissions.js';
import type { IdentityService } from './service.js';

const route = routesFor<IdentityService, IdentityPermission>();
const secretKeySchema = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z0-9_.:/-]+$/, 'must be 1–256 letters, digits or _ . : / -');
const teamBody = z.strictObject({ team: teamNameSchema, agent_id: agentIdSchema });
const teamResponse = z.object({ team: z.string(), agent_id: z.string(), members: z.array(z.string()) });

/** agent-identity routes (SPEC.md §4 agent-identity, CONTRACT.md response shapes, plus documented additions). */
export const identityRoutes = [
  route({
    path: '/agents/create',
    summary: 'Create an agent.',
    description:
      'Create an agent with an id and display name (operators only, with the bridge key). Returns agent_id and created_at; conflict when the id is taken.',
    effects: {},
    audit: { action: 'agent.create', target: (body) => `agent:${body.agent_id}` },
    request: z.strictObject({ agent_id: agentIdSchema, display_name: z.string().min(1).max(256) }),
    response: z.object({ agent_id: z.string(), created_at: instantSchema }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.createAgent({ agentId: body.agent_id, displayName: body.display_name }),
  }),
  route({
    path: '/device/issue',
    summary: 'Issue a device key for an agent. The key is returned once and stored only as a hash.',
    description:
      'Issue a device key for an agent (operators only, with the bridge key). The key is returned once and stored only as a hash. Returns device_key, device_id and expires_at.',
    effects: {},
    audit: {
      action: 'device.issue',
      target: (body, result) => `agent:${body.agent_id}${result ? `/device:${result.device_id}` : ''}`,
    },
    request: z.strictObject({
      agent_id: agentIdSchema,
      label: z.string().min(1).max(256),
      ttl_days: z.number().int().min(1).max(3650).optional(),
    }),
    response: z.object({ device_key: z.string(), device_id: z.string(), expires_at: instantSchema }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.issueDevice({ agentId: body.agent_id, label: body.label, ttlDays: body.ttl_days }),
  }),
  route({
    path: '/device/revoke',
    summary: 'Revoke a device key (bridge key, or the device key being revoked).',
    description:
      'Revoke a device key at once: the bridge key may revoke any device, a device key only itself. Use it when a key leaked or a device is retired. Returns device_id and revoked_at.',
    effects: { destructive: true, idempotent: true },
    audit: { action: 'device.revoke', target: (body) => `device:${body.device_id}` },
    request: z.strictObject({ device_id: z.string().min(1).max(64) }),
    response: z.object({ device_id: z.string(), revoked_at: instantSchema }),
    auth: { kind: 'any' },
    handler: ({ body, service, principal }) => service.revokeDevice({ deviceId: body.device_id, principal: principal! }),
  }),
  route({
    path: '/delegate',
    summary: 'Create a delegation token that acts as from_agent for the listed permissions until expires_at.',
    description:
      'Create a delegation token that another agent (or a sub-agent) can use to act as from_agent, only for the listed permissions and only until expires_at. Returns the token once, with delegation_id, scope and expires_at.',
    effects: {},
    audit: {
      action: 'delegation.create',
      target: (body, result) => `agent:${body.from_agent}${result ? `/delegation:${result.delegation_id}` : ''}/to:${body.to_agent}`,
      agent: (body) => body.from_agent,
    },
    request: z.strictObject({
      from_agent: agentIdSchema,
      to_agent: agentIdSchema,
      scope: z.array(permissionNameSchema).min(1).max(32),
      expires_at: timestampSchema,
    }),
    response: z.object({ delegation_id: z.string(), token: z.string(), expires_at: instantSchema, scope: z.array(z.string()) }),
    auth: { kind: 'agent', permission: 'identity.delegate', agents: (body) => [body.from_agent], bridge: false },
    handler: ({ body, service, principal }) =>
      service.delegate({
        fromAgent: body.from_agent,
        toAgent: body.to_agent,
        scope: body.scope,
        expiresAt: body.expires_at,
        principal: principal!,
      }),
  }),
  route({
    path: '/delegate/revoke',
    summary: 'End a delegation at once (bridge key, the delegating agent, or the token itself).',
    description:
      'End a delegation at once (the bridge key, the delegating agent, or the token itself). Returns delegation_id and revoked_at.',
    effects: { destructive: true, idempotent: true },
    audit: { action: 'delegation.revoke', target: (body) => `delegation:${body.delegation_id}` },
    request: z.strictObject({ delegation_id: z.string().min(1).max(64) }),
    response: z.object({ delegation_id: z.string(), revoked_at: instantSchema }),
    auth: { kind: 'any' },
    handler: ({ body, service, principal }) => service.revokeDelegation({ delegationId: body.delegation_id, principal: principal! }),
  }),
  route({
    path: '/secrets/put',
    summary: 'Store a secret, encrypted at rest (AES-256-GCM).',
    description:
      'Store a secret (API key, password) for the agent, encrypted at rest, replacing any previous value under the key. Returns the key and updated_at, never the value.',
    effects: { destructive: true, idempotent: true },
    audit: { action: 'secret.put', target: (body) => `agent:${body.agent_id}/secret:${body.key}` },
    request: z.strictObject({ agent_id: agentIdSchema, key: secretKeySchema, value: z.string().max(65_536) }),
    response: z.object({ key: z.string(), updated_at: instantSchema }),
    // SPEC.md §5: a device key; the bridge key may not write an agent's secrets (#11).
    auth: { kind: 'agent', permission: 'secrets.write', agents: (body) => [body.agent_id], bridge: false },
    handler: ({ body, service }) => service.putSecret({ agentId: body.agent_id, key: body.key, value: body.value }),
  }),
  route({
    path: '/secrets/get',
    summary: 'Read the plain value of a secret.',
    description:
      'Read the plain value of one of the agent’s secrets. The value is sensitive: use it, do not repeat it. Returns { value }; not_found when absent.',
    effects: { readOnly: true, idempotent: true },
    audit: { action: 'secret.get', target: (body) => `agent:${body.agent_id}/secret:${body.key}` },
    request: z.strictObject({ agent_id: agentIdSchema, key: secretKeySchema }),
    response: z.object({ value: z.string() }),
    auth: { kind: 'agent', permission: 'secrets.read', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.getSecret({ agentId: body.agent_id, key: body.key }),
  }),
  route({
    path: '/secrets/list',
    summary: 'List the names of an agent’s secrets (never their values).',
    description: 'List the names of the agent’s secrets with their update times (never their values).',
    effects: { readOnly: true, idempotent: true },
    request: z.strictObject({ agent_id: agentIdSchema }),
    response: z.object({ secrets: z.array(z.object({ key: z.string(), updated_at: instantSchema })) }),
    auth: { kind: 'agent', permission: 'secrets.read', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.listSecrets({ agentId: body.agent_id }),
  }),
  route({
    path: '/secrets/delete',
    summary: 'Delete a secret.',
    description: 'Delete one of the agent’s secrets. Returns the key and whether it existed.',
    effects: { destructive: true, idempotent: true },
    audit: { action: 'secret.delete', target: (body) => `agent:${body.agent_id}/secret:${body.key}` },
    request: z.strictObject({ agent_id: agentIdSchema, key: secretKeySchema }),
    response: z.object({ key: z.string(), deleted: z.boolean() }),
    auth: { kind: 'agent', permission: 'secrets.write', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.deleteSecret({ agentId: body.agent_id, key: body.key }),
  }),
  route({
    path: '/settings/list',
    summary: 'List the service settings with their values and JSON Schemas.',
    description: 'List the service settings with their values and JSON Schemas (operators only, with the bridge key).',
    effects: { readOnly: true, idempotent: true },
    request: z.strictObject({}),
    response: z.object({ settings: z.array(z.object({ key: z.string(), value: z.unknown(), schema: z.record(z.string(), z.unknown()) })) }),
    auth: { kind: 'bridge' },
    handler: async ({ service }) => ({ settings: await service.settings.list() }),
  }),
  route({
    path: '/settings/set',
    summary: 'Set a service setting (keys from the allow-list; values checked against their schema).',
    description:
      'Set a service setting from the allow-list; the value is checked against its schema (operators only, with the bridge key). Returns key and value.',
    effects: { destructive: true, idempotent: true },
    audit: { action: 'setting.set', target: (body) => `setting:${body.key}` },
    request: z.strictObject({ key: z.string().min(1).max(128), value: z.unknown() }),
    response: z.object({ key: z.string(), value: z.unknown() }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.settings.set({ key: body.key, value: body.value }),
  }),
  route({
    path: '/teams/add',
    summary: 'Add an agent to a team (idempotent). Team scopes (`team:<name>`) are visible to members.',
    description:
      'Add an agent to a team (operators only, with the bridge key); members see each other’s team:<name> records. Returns the team’s members.',
    effects: { idempotent: true },
    audit: { action: 'team.add', target: (body) => `team:${body.team}/agent:${body.agent_id}` },
    request: teamBody,
    response: teamResponse,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.addTeamMember({ team: body.team, agentId: body.agent_id }),
  }),
  route({
    path: '/teams/remove',
    summary: 'Remove an agent from a team (idempotent).',
    description: 'Remove an agent from a team (operators only, with the bridge key). Returns the team’s remaining members.',
    effects: { destructive: true, idempotent: true },
    audit: { action: 'team.remove', target: (body) => `team:${body.team}/agent:${body.agent_id}` },
    request: teamBody,
    response: teamResponse,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.removeTeamMember({ team: body.team, agentId: body.agent_id }),
  }),
];
