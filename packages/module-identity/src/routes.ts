import { routesFor } from '@agentinfra/core';
import type { IdentityPermission } from './permissions.js';
import {
  createAgentRequestSchema,
  createAgentResponseSchema,
  delegateRequestSchema,
  delegateResponseSchema,
  deleteSecretResponseSchema,
  getSecretResponseSchema,
  issueDeviceRequestSchema,
  issueDeviceResponseSchema,
  listSecretsRequestSchema,
  listSecretsResponseSchema,
  listSettingsRequestSchema,
  listSettingsResponseSchema,
  putSecretRequestSchema,
  putSecretResponseSchema,
  revokeDelegationRequestSchema,
  revokeDelegationResponseSchema,
  revokeDeviceRequestSchema,
  revokeDeviceResponseSchema,
  secretRefRequestSchema,
  setSettingRequestSchema,
  setSettingResponseSchema,
  teamMemberRequestSchema,
  teamMembersResponseSchema,
} from './schemas.js';
import type { IdentityService } from './service.js';

const route = routesFor<IdentityService, IdentityPermission>();

/** agent-identity routes (SPEC.md §4 agent-identity, CONTRACT.md response shapes, plus documented additions). */
export const identityRoutes = [
  route({
    path: '/agents/create',
    summary: 'Create an agent.',
    description:
      'Create an agent with an id and display name (operators only, with the bridge key). Returns agent_id and created_at; conflict when the id is taken.',
    effects: {},
    // A new agent: the examples of the other routes act as `alice` and `bob`, who already exist.
    example: { agent_id: 'carol', display_name: 'Carol' },
    audit: { action: 'agent.create', target: (body) => `agent:${body.agent_id}` },
    request: createAgentRequestSchema,
    response: createAgentResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.createAgent(body),
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
    request: issueDeviceRequestSchema,
    response: issueDeviceResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.issueDevice(body),
  }),
  route({
    path: '/device/revoke',
    summary: 'Revoke a device key (bridge key, or the device key being revoked).',
    description:
      'Revoke a device key at once: the bridge key may revoke any device, a device key only itself. Use it when a key leaked or a device is retired. Returns device_id and revoked_at.',
    effects: { destructive: true, idempotent: true },
    audit: { action: 'device.revoke', target: (body) => `device:${body.device_id}` },
    request: revokeDeviceRequestSchema,
    response: revokeDeviceResponseSchema,
    auth: { kind: 'any', delegation: false },
    handler: async ({ body, service, principal, auditAgent }) => {
      // The body names only the device: the event concerns its agent, also when the bridge key revokes it.
      const { agent_id, ...revoked } = await service.revokeDevice(body, principal!);
      auditAgent(agent_id);
      return revoked;
    },
  }),
  route({
    path: '/delegate',
    summary: 'Create a delegation token that acts as from_agent for the listed permissions until expires_at.',
    description:
      'Create a delegation token that another agent (or a sub-agent) can use to act as from_agent, only for the listed permissions and only until expires_at. Returns the token once, with delegation_id, scope and expires_at. Beyond from_agent’s quota of live delegations (10,000 by default) it answers 409; revoke one first.',
    effects: {},
    audit: {
      action: 'delegation.create',
      target: (body, result) => `agent:${body.from_agent}${result ? `/delegation:${result.delegation_id}` : ''}/to:${body.to_agent}`,
      agent: (body) => body.from_agent,
    },
    request: delegateRequestSchema,
    response: delegateResponseSchema,
    auth: { kind: 'agent', permission: 'identity.delegate', agents: (body) => [body.from_agent], bridge: false },
    handler: ({ body, service, principal }) => service.delegate(body, principal!),
  }),
  route({
    path: '/delegate/revoke',
    summary: 'End a delegation at once (bridge key, the delegating agent, or the token itself).',
    description:
      'End a delegation at once, and every delegation made from its token. Allowed for the bridge key, a device key of the delegating agent, the token itself, or a token with identity.delegate that made it (directly or down its chain; not a sibling or a parent: 404). Returns delegation_id and revoked_at.',
    effects: { destructive: true, idempotent: true },
    audit: { action: 'delegation.revoke', target: (body) => `delegation:${body.delegation_id}` },
    request: revokeDelegationRequestSchema,
    response: revokeDelegationResponseSchema,
    auth: { kind: 'any' },
    handler: async ({ body, service, principal, auditAgent }) => {
      // The body names only the delegation: the event concerns its from_agent, also when the bridge key revokes it.
      const { from_agent, ...revoked } = await service.revokeDelegation(body, principal!);
      auditAgent(from_agent);
      return revoked;
    },
  }),
  route({
    path: '/secrets/put',
    summary: 'Store a secret, encrypted at rest (AES-256-GCM).',
    description:
      'Store a secret (API key, password) for the agent, encrypted at rest, replacing any previous value under the key. Returns the key and updated_at, never the value. A new key beyond the agent’s quota of secrets (500 by default) answers 409; delete one first.',
    effects: { destructive: true, idempotent: true },
    audit: { action: 'secret.put', target: (body) => `agent:${body.agent_id}/secret:${body.key}` },
    request: putSecretRequestSchema,
    response: putSecretResponseSchema,
    // SPEC.md §5: a device key; the bridge key may not write an agent's secrets (#11).
    auth: { kind: 'agent', permission: 'secrets.write', agents: (body) => [body.agent_id], bridge: false },
    handler: ({ body, service }) => service.putSecret(body),
  }),
  route({
    path: '/secrets/get',
    summary: 'Read the plain value of a secret.',
    description:
      'Read the plain value of one of the agent’s secrets. The value is sensitive: use it, do not repeat it. Returns { value }; not_found when absent.',
    effects: { readOnly: true, idempotent: true },
    audit: { action: 'secret.get', target: (body) => `agent:${body.agent_id}/secret:${body.key}` },
    request: secretRefRequestSchema,
    response: getSecretResponseSchema,
    auth: { kind: 'agent', permission: 'secrets.read', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.getSecret(body),
  }),
  route({
    path: '/secrets/list',
    summary: 'List the names of an agent’s secrets (never their values).',
    description:
      'List the names of the agent’s secrets with their update times (never their values), sorted by key, one page of up to limit (default 500); pass next_cursor back as cursor for the next page (null on the last).',
    effects: { readOnly: true, idempotent: true },
    request: listSecretsRequestSchema,
    response: listSecretsResponseSchema,
    auth: { kind: 'agent', permission: 'secrets.read', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.listSecrets(body),
  }),
  route({
    path: '/secrets/delete',
    summary: 'Delete a secret.',
    description: 'Delete one of the agent’s secrets. Returns the key with deleted: true; a secret that does not exist answers 404.',
    effects: { destructive: true, idempotent: true },
    audit: { action: 'secret.delete', target: (body) => `agent:${body.agent_id}/secret:${body.key}` },
    request: secretRefRequestSchema,
    response: deleteSecretResponseSchema,
    auth: { kind: 'agent', permission: 'secrets.write', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.deleteSecret(body),
  }),
  route({
    path: '/settings/list',
    summary: 'List the service settings with their values and JSON Schemas.',
    description: 'List the service settings with their values and JSON Schemas (operators only, with the bridge key).',
    effects: { readOnly: true, idempotent: true },
    request: listSettingsRequestSchema,
    response: listSettingsResponseSchema,
    auth: { kind: 'bridge' },
    handler: async ({ service }) => ({ settings: await service.settings.list() }),
  }),
  route({
    path: '/settings/set',
    summary: 'Set a service setting (keys from the allow-list; values checked against their schema).',
    description:
      'Set a service setting from the allow-list; the value is checked against its schema (operators only, with the bridge key). Returns key and value.',
    effects: { destructive: true, idempotent: true },
    example: { key: 'postbox_retention_days', value: 90 },
    audit: { action: 'setting.set', target: (body) => `setting:${body.key}` },
    request: setSettingRequestSchema,
    response: setSettingResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.settings.set(body),
  }),
  route({
    path: '/teams/add',
    summary: 'Add an agent to a team (idempotent). Team scopes (`team:<name>`) are visible to members.',
    description:
      'Add an agent to a team (operators only, with the bridge key); members see each other’s team:<name> records. Returns the team’s members.',
    effects: { idempotent: true },
    audit: { action: 'team.add', target: (body) => `team:${body.team}/agent:${body.agent_id}` },
    request: teamMemberRequestSchema,
    response: teamMembersResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.addTeamMember(body),
  }),
  route({
    path: '/teams/remove',
    summary: 'Remove an agent from a team (idempotent).',
    description: 'Remove an agent from a team (operators only, with the bridge key). Returns the team’s remaining members.',
    effects: { destructive: true, idempotent: true },
    audit: { action: 'team.remove', target: (body) => `team:${body.team}/agent:${body.agent_id}` },
    request: teamMemberRequestSchema,
    response: teamMembersResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.removeTeamMember(body),
  }),
];
