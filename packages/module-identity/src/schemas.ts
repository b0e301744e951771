import { agentIdSchema, instantSchema, permissionNameSchema, teamNameSchema, timestampSchema } from '@agentinfra/core';
import { z } from 'zod';

/**
 * Request and response bodies of agent-identity (SPEC.md §4 agent-identity,
 * CONTRACT.md response shapes, plus documented additions). The service takes
 * and returns these shapes, so HTTP and library callers see the same thing.
 */

/** A secret's key: 1–256 letters, digits or `_ . : / -`, unique per agent. */
export const secretKeySchema = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z0-9_.:/-]+$/, 'must be 1–256 letters, digits or _ . : / -');

/** Longest secret value: 64 KiB, counted in bytes of UTF-8 (what is sealed and stored), not in characters. */
export const MAX_SECRET_VALUE_BYTES = 65_536;
const SECRET_VALUE_TOO_LONG = `must be at most ${MAX_SECRET_VALUE_BYTES} bytes (64 KiB) of UTF-8`;

/**
 * A secret's value, at most {@link MAX_SECRET_VALUE_BYTES} bytes of UTF-8
 * (400 over it). The character cap never refuses a value the byte count
 * accepts; it stops longer strings before they are measured and states the
 * bound in the OpenAPI document.
 */
export const secretValueSchema = z
  .string()
  .max(MAX_SECRET_VALUE_BYTES, { message: SECRET_VALUE_TOO_LONG, abort: true })
  .refine((value) => Buffer.byteLength(value, 'utf8') <= MAX_SECRET_VALUE_BYTES, { message: SECRET_VALUE_TOO_LONG });

/** POST /agents/create (bridge key). */
export const createAgentRequestSchema = z.strictObject({ agent_id: agentIdSchema, display_name: z.string().min(1).max(256) });
export type CreateAgentRequest = z.output<typeof createAgentRequestSchema>;
/** The new agent. */
export const createAgentResponseSchema = z.object({ agent_id: z.string(), created_at: instantSchema });
export type CreateAgentResponse = z.output<typeof createAgentResponseSchema>;

/** POST /device/issue (bridge key): `ttl_days` 1..3650, the configured default (90) when absent. */
export const issueDeviceRequestSchema = z.strictObject({
  agent_id: agentIdSchema,
  label: z.string().min(1).max(256),
  ttl_days: z.number().int().min(1).max(3650).optional(),
});
export type IssueDeviceRequest = z.output<typeof issueDeviceRequestSchema>;
/** The device key, returned this once (stored only as a hash). */
export const issueDeviceResponseSchema = z.object({ device_key: z.string(), device_id: z.string(), expires_at: instantSchema });
export type IssueDeviceResponse = z.output<typeof issueDeviceResponseSchema>;

/** POST /device/revoke (bridge key, or the device key being revoked). */
export const revokeDeviceRequestSchema = z.strictObject({ device_id: z.string().min(1).max(64) });
export type RevokeDeviceRequest = z.output<typeof revokeDeviceRequestSchema>;
/** The device and when it was (first) revoked. */
export const revokeDeviceResponseSchema = z.object({ device_id: z.string(), revoked_at: instantSchema });
export type RevokeDeviceResponse = z.output<typeof revokeDeviceResponseSchema>;

/** POST /delegate: 1–32 permissions for `to_agent` acting as `from_agent` until `expires_at`. */
export const delegateRequestSchema = z.strictObject({
  from_agent: agentIdSchema,
  to_agent: agentIdSchema,
  scope: z.array(permissionNameSchema).min(1).max(32),
  expires_at: timestampSchema,
});
export type DelegateRequest = z.output<typeof delegateRequestSchema>;
/** The delegation token, returned this once, with its sorted, de-duplicated scope. */
export const delegateResponseSchema = z.object({
  delegation_id: z.string(),
  token: z.string(),
  expires_at: instantSchema,
  scope: z.array(z.string()),
});
export type DelegateResponse = z.output<typeof delegateResponseSchema>;

/** POST /delegate/revoke (bridge key, the delegating agent, or the token itself). */
export const revokeDelegationRequestSchema = z.strictObject({ delegation_id: z.string().min(1).max(64) });
export type RevokeDelegationRequest = z.output<typeof revokeDelegationRequestSchema>;
/** The delegation and when it was (first) revoked. */
export const revokeDelegationResponseSchema = z.object({ delegation_id: z.string(), revoked_at: instantSchema });
export type RevokeDelegationResponse = z.output<typeof revokeDelegationResponseSchema>;

/** POST /secrets/put: a value of at most 64 KiB of UTF-8, sealed at rest. */
export const putSecretRequestSchema = z.strictObject({ agent_id: agentIdSchema, key: secretKeySchema, value: secretValueSchema });
export type PutSecretRequest = z.output<typeof putSecretRequestSchema>;
/** The key and when it was stored (never the value). */
export const putSecretResponseSchema = z.object({ key: z.string(), updated_at: instantSchema });
export type PutSecretResponse = z.output<typeof putSecretResponseSchema>;

/** POST /secrets/get and /secrets/delete: one secret of an agent. */
export const secretRefRequestSchema = z.strictObject({ agent_id: agentIdSchema, key: secretKeySchema });
export type SecretRefRequest = z.output<typeof secretRefRequestSchema>;
/** The plain value of a secret. */
export const getSecretResponseSchema = z.object({ value: z.string() });
export type GetSecretResponse = z.output<typeof getSecretResponseSchema>;
/** A deleted secret's key. */
export const deleteSecretResponseSchema = z.object({ key: z.string(), deleted: z.boolean() });
export type DeleteSecretResponse = z.output<typeof deleteSecretResponseSchema>;

/**
 * POST /secrets/list: one page, `limit` 1..500 like every list here, but
 * 500 by default (the default of setting `identity_max_secrets_per_agent`), so that a
 * caller sending only `agent_id` still gets every secret in one page.
 */
export const listSecretsRequestSchema = z.strictObject({
  agent_id: agentIdSchema,
  limit: z.number().int().min(1).max(500).default(500).describe('Secrets returned: 1..500, default 500.'),
  cursor: z.string().max(512).nullable().default(null).describe('The next_cursor of the previous page; null or absent for the first keys.'),
});
export type ListSecretsRequest = z.output<typeof listSecretsRequestSchema>;
/** A page of an agent's secrets' names and update times, sorted by key (never values); `next_cursor` is null on the last page. */
export const listSecretsResponseSchema = z.object({
  secrets: z.array(z.object({ key: z.string(), updated_at: instantSchema })),
  next_cursor: z.string().nullable(),
});
export type ListSecretsResponse = z.output<typeof listSecretsResponseSchema>;

/** POST /settings/list (bridge key). */
export const listSettingsRequestSchema = z.strictObject({});
export type ListSettingsRequest = z.output<typeof listSettingsRequestSchema>;
/** Every allow-listed setting with its value and JSON Schema. */
export const listSettingsResponseSchema = z.object({
  settings: z.array(z.object({ key: z.string(), value: z.unknown(), schema: z.record(z.string(), z.unknown()) })),
});
export type ListSettingsResponse = z.output<typeof listSettingsResponseSchema>;

/** POST /settings/set (bridge key): the value is checked against the setting's own schema. */
export const setSettingRequestSchema = z.strictObject({ key: z.string().min(1).max(128), value: z.unknown() });
export type SetSettingRequest = z.output<typeof setSettingRequestSchema>;
/** The setting as stored. */
export const setSettingResponseSchema = z.object({ key: z.string(), value: z.unknown() });
export type SetSettingResponse = z.output<typeof setSettingResponseSchema>;

/** POST /teams/add and /teams/remove (bridge key). */
export const teamMemberRequestSchema = z.strictObject({ team: teamNameSchema, agent_id: agentIdSchema });
export type TeamMemberRequest = z.output<typeof teamMemberRequestSchema>;
/** The team's members after the change, sorted. */
export const teamMembersResponseSchema = z.object({ team: z.string(), agent_id: z.string(), members: z.array(z.string()) });
export type TeamMembersResponse = z.output<typeof teamMembersResponseSchema>;
