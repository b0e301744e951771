import { routesFor } from '@agentinfra/core';
import type { ArtifactsPermission } from './permissions.js';
import {
  commitRequestSchema,
  commitResponseSchema,
  downloadRequestSchema,
  downloadResponseSchema,
  fetchRequestSchema,
  fetchResponseSchema,
  grantRequestSchema,
  grantResponseSchema,
  listRequestSchema,
  listResponseSchema,
  registerRequestSchema,
  registerResponseSchema,
  revokeRequestSchema,
  revokeResponseSchema,
} from './schemas.js';
import type { ArtifactsService } from './service.js';

const route = routesFor<ArtifactsService, ArtifactsPermission>();

/** agent-artifacts routes (SPEC.md §4 agent-artifacts, CONTRACT.md response shapes). */
export const artifactsRoutes = [
  route({
    path: '/register',
    summary: 'Register an artifact; PUT exactly `size` bytes to the returned upload_url, then /commit.',
    description:
      'Start storing a file: declare its key (path-like name), media type, exact size in bytes and lifetime. Then PUT exactly `size` bytes to the returned upload_url with upload_headers (over MCP: the artifacts_upload tool), then /commit with the SHA-256. Returns artifact_id, upload_url, upload_expires_at and upload_headers.',
    effects: {},
    request: registerRequestSchema,
    response: registerResponseSchema,
    auth: { kind: 'agent', permission: 'artifacts.write', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.register(body),
  }),
  route({
    path: '/commit',
    summary: 'Verify the uploaded bytes (size and SHA-256) and commit the artifact.',
    description:
      'Finish storing a file: the server checks the uploaded bytes against the registered size and the given SHA-256 (hex) and commits the artifact. Committing again with the same hash answers the same. Returns artifact_id, status committed, size and sha256; verification_failed when the bytes differ.',
    effects: { idempotent: true },
    request: commitRequestSchema,
    response: commitResponseSchema,
    auth: { kind: 'any', permission: 'artifacts.write' },
    handler: ({ body, service, principal }) => service.commit(body, principal!),
  }),
  route({
    path: '/grant',
    summary: 'Let another agent fetch a committed artifact until expires_at; returns a g_ grant token once.',
    description:
      'Let another agent download one of your committed artifacts until expires_at. Returns grant_id and a g_ grant token (shown once) to hand to that agent, which passes it to /fetch.',
    effects: {},
    request: grantRequestSchema,
    response: grantResponseSchema,
    auth: { kind: 'any', permission: 'artifacts.grant' },
    handler: ({ body, service, principal }) => service.grant(body, principal!),
  }),
  route({
    path: '/revoke',
    summary: 'End every live grant of the artifact to to_agent (expires_at is accepted and ignored).',
    description: 'End every live grant of an artifact to an agent at once. Returns how many grants were ended.',
    effects: { destructive: true, idempotent: true },
    request: revokeRequestSchema,
    response: revokeResponseSchema,
    auth: { kind: 'any', permission: 'artifacts.grant' },
    handler: ({ body, service, principal }) => service.revoke(body, principal!),
  }),
  route({
    path: '/fetch',
    summary: 'Exchange a grant token for a short-lived signed download URL (no other credential).',
    description:
      'Exchange a grant token another agent gave you for a short-lived signed download URL of the shared artifact (no other credential needed). Returns url and expires_at.',
    effects: { readOnly: true, idempotent: true },
    request: fetchRequestSchema,
    response: fetchResponseSchema,
    auth: { kind: 'none', credentialField: 'grant_token' },
    handler: ({ body, service }) => service.fetch(body),
  }),
  route({
    path: '/download',
    summary: 'A short-lived signed download URL of one of the caller’s own committed artifacts, with its key, mime, size and sha256.',
    description:
      'Read back a file you stored: returns a short-lived signed URL to GET the committed artifact, with its key, mime, size and sha256 and the URL’s expires_at. Conflict while it is pending or once it expired.',
    effects: { readOnly: true, idempotent: true },
    request: downloadRequestSchema,
    response: downloadResponseSchema,
    auth: { kind: 'any', permission: 'artifacts.read' },
    handler: ({ body, service, principal }) => service.download(body, principal!),
  }),
  route({
    path: '/list',
    summary: 'List an agent’s artifacts by key prefix, newest first, with status and expiry.',
    description:
      'List the agent’s artifacts whose key starts with `prefix`, newest first, with status (pending, committed, expired), size, sha256 and expiry. Pass next_cursor back as `cursor` for the next page.',
    effects: { readOnly: true, idempotent: true },
    request: listRequestSchema,
    response: listResponseSchema,
    auth: { kind: 'agent', permission: 'artifacts.read', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.list(body),
  }),
];
