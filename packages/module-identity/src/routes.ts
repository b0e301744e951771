import { agentIdSchema, permissionNameSchema, routesFor, teamNameSchema, timestampSchema } from '@agentinfra/core';
import { z } from 'zod';
import type { IdentityService } from './service.js';

const route = routesFor<IdentityService>();
const iso = z.string();
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
    request: z.strictObject({ agent_id: agentIdSchema, display_name: z.string().min(1).max(256) }),
    response: z.object({ agent_id: z.string(), created_at: iso }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.createAgent({ agentId: body.agent_id, displayName: body.display_name }),
  }),
  route({
    path: '/device/issue',
    summary: 'Issue a device key for an agent. The key is returned once and stored only as a hash.',
    request: z.strictObject({
      agent_id: agentIdSchema,
      label: z.string().min(1).max(256),
      ttl_days: z.number().int().min(1).max(3650).optional(),
    }),
    response: z.object({ device_key: z.string(), device_id: z.string(), expires_at: iso }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.issueDevice({ agentId: body.agent_id, label: body.label, ttlDays: body.ttl_days }),
  }),
  route({
    path: '/device/revoke',
    summary: 'Revoke a device key (bridge key, or the device key being revoked).',
    request: z.strictObject({ device_id: z.string().min(1).max(64) }),
    response: z.object({ device_id: z.string(), revoked_at: iso }),
    auth: { kind: 'any' },
    handler: ({ body, service, principal }) => service.revokeDevice({ deviceId: body.device_id, principal: principal! }),
  }),
  route({
    path: '/delegate',
    summary: 'Create a delegation token that acts as from_agent for the listed permissions until expires_at.',
    request: z.strictObject({
      from_agent: agentIdSchema,
      to_agent: agentIdSchema,
      scope: z.array(permissionNameSchema).min(1).max(32),
      expires_at: timestampSchema,
    }),
    response: z.object({ delegation_id: z.string(), token: z.string(), expires_at: iso, scope: z.array(z.string()) }),
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
    request: z.strictObject({ delegation_id: z.string().min(1).max(64) }),
    response: z.object({ delegation_id: z.string(), revoked_at: iso }),
    auth: { kind: 'any' },
    handler: ({ body, service, principal }) => service.revokeDelegation({ delegationId: body.delegation_id, principal: principal! }),
  }),
  route({
    path: '/secrets/put',
    summary: 'Store a secret, encrypted at rest (AES-256-GCM).',
    request: z.strictObject({ agent_id: agentIdSchema, key: secretKeySchema, value: z.string().max(65_536) }),
    response: z.object({ key: z.string(), updated_at: iso }),
    auth: { kind: 'agent', permission: 'secrets.write', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.putSecret({ agentId: body.agent_id, key: body.key, value: body.value }),
  }),
  route({
    path: '/secrets/get',
    summary: 'Read the plain value of a secret.',
    request: z.strictObject({ agent_id: agentIdSchema, key: secretKeySchema }),
    response: z.object({ value: z.string() }),
    auth: { kind: 'agent', permission: 'secrets.read', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.getSecret({ agentId: body.agent_id, key: body.key }),
  }),
  route({
    path: '/secrets/list',
    summary: 'List the names of an agent’s secrets (never their values).',
    request: z.strictObject({ agent_id: agentIdSchema }),
    response: z.object({ secrets: z.array(z.object({ key: z.string(), updated_at: iso })) }),
    auth: { kind: 'agent', permission: 'secrets.read', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.listSecrets({ agentId: body.agent_id }),
  }),
  route({
    path: '/secrets/delete',
    summary: 'Delete a secret.',
    request: z.strictObject({ agent_id: agentIdSchema, key: secretKeySchema }),
    response: z.object({ key: z.string(), deleted: z.boolean() }),
    auth: { kind: 'agent', permission: 'secrets.write', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.deleteSecret({ agentId: body.agent_id, key: body.key }),
  }),
  route({
    path: '/settings/list',
    summary: 'List the service settings with their values and JSON Schemas.',
    request: z.strictObject({}),
    response: z.object({ settings: z.array(z.object({ key: z.string(), value: z.unknown(), schema: z.record(z.string(), z.unknown()) })) }),
    auth: { kind: 'bridge' },
    handler: async ({ service }) => ({ settings: await service.settings.list() }),
  }),
  route({
    path: '/settings/set',
    summary: 'Set a service setting (keys from the allow-list; values checked against their schema).',
    request: z.strictObject({ key: z.string().min(1).max(128), value: z.unknown() }),
    response: z.object({ key: z.string(), value: z.unknown() }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.settings.set({ key: body.key, value: body.value }),
  }),
  route({
    path: '/teams/add',
    summary: 'Add an agent to a team (idempotent). Team scopes (`team:<name>`) are visible to members.',
    request: teamBody,
    response: teamResponse,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.addTeamMember({ team: body.team, agentId: body.agent_id }),
  }),
  route({
    path: '/teams/remove',
    summary: 'Remove an agent from a team (idempotent).',
    request: teamBody,
    response: teamResponse,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.removeTeamMember({ team: body.team, agentId: body.agent_id }),
  }),
];
