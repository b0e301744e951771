import type { AnyRoute } from './module.js';

/** The CONTRACT.md error body, as `components.schemas.Error`. */
export const errorSchema = {
  type: 'object',
  description: 'Every error: a snake_case `code` for programs, a `message` for people, and sometimes `details`.',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      additionalProperties: false,
      properties: {
        code: { type: 'string', pattern: '^[a-z][a-z0-9_]*$', description: 'Machine-readable code, stable across versions.' },
        message: { type: 'string', description: 'What went wrong, for a person. Never a stack trace, SQL text or secret.' },
        details: { description: 'Structured data about the failure (fields that failed, a record to publish …).' },
      },
    },
  },
  example: { error: { code: 'not_found', message: 'No such record.' } },
};

interface ErrorResponse {
  status: string;
  name: string;
  code: string;
  description: string;
  message: string;
  details?: unknown;
  headers?: Record<string, unknown>;
}

const ERROR_RESPONSES: readonly ErrorResponse[] = [
  {
    status: '400',
    name: 'InvalidRequest',
    code: 'invalid_request',
    description: 'The body is not JSON, nests too deep, or fails the schema; `details` names the fields.',
    message: 'The request body does not match the schema.',
    details: { fields: [{ path: 'agent_id', message: 'Invalid input: expected string, received undefined' }] },
  },
  {
    status: '401',
    name: 'Unauthenticated',
    code: 'unauthenticated',
    description: 'No credential, or an unknown, expired or revoked one.',
    message: 'A valid credential is required: send Authorization: Bearer <key>.',
    headers: { 'WWW-Authenticate': { description: 'Always `Bearer`.', schema: { type: 'string' } } },
  },
  {
    status: '403',
    name: 'Forbidden',
    code: 'forbidden',
    description: 'The credential is valid but not for the agent the body names, or lacks the permission.',
    message: 'This credential may not act for agent bob.',
  },
  {
    status: '404',
    name: 'NotFound',
    code: 'not_found',
    description: 'The named record does not exist or is not visible to the caller.',
    message: 'No such record.',
  },
  {
    status: '405',
    name: 'MethodNotAllowed',
    code: 'method_not_allowed',
    description: 'A method other than POST (OPTIONS is the CORS preflight).',
    message: 'GET is not allowed here; use POST.',
    headers: { Allow: { description: 'Always `POST`.', schema: { type: 'string' } } },
  },
  {
    status: '408',
    name: 'RequestTimeout',
    code: 'request_timeout',
    description: 'The body did not arrive within `http.bodyTimeoutMs`; the connection is closed.',
    message: 'The request body did not arrive within 30000 ms.',
  },
  {
    status: '409',
    name: 'Conflict',
    code: 'conflict',
    description: 'The record already exists or is bound to someone else.',
    message: 'Already exists.',
  },
  {
    status: '413',
    name: 'PayloadTooLarge',
    code: 'payload_too_large',
    description: 'The body (or a declared size) is over the limit; the connection is closed.',
    message: 'The request body is larger than 1048576 bytes.',
  },
  {
    status: '415',
    name: 'UnsupportedMediaType',
    code: 'unsupported_media_type',
    description: 'A non-empty body was sent without `content-type: application/json`.',
    message: 'Send the body as application/json.',
  },
  {
    status: '422',
    name: 'VerificationFailed',
    code: 'verification_failed',
    description: 'A check against the outside world failed (size or SHA-256 mismatch, DNS record not found).',
    message: 'The uploaded bytes do not match the declared sha256.',
  },
  {
    status: '429',
    name: 'RateLimited',
    code: 'rate_limited',
    description: 'A rate limit or quota is exhausted; retry after `Retry-After` seconds.',
    message: 'Too many requests.',
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } } },
  },
  {
    status: '500',
    name: 'Internal',
    code: 'internal',
    description: 'An unexpected failure; nothing was written. Report it with the `x-request-id` header.',
    message: 'Internal error.',
  },
  {
    status: '503',
    name: 'Unavailable',
    code: 'unavailable',
    description:
      'A dependency the request needs (database, Redis, blob store) could not be reached or was busy; the request did not take effect. Retry after `Retry-After` seconds.',
    message: 'The database this request needs is unavailable right now, so nothing was done; try again in 2 s.',
    details: { retry_after_seconds: 2 },
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } } },
  },
  {
    status: '507',
    name: 'InsufficientStorage',
    code: 'insufficient_storage',
    description: "The server's disk or database is full; nothing was stored. Retrying helps once an operator frees space.",
    message: 'The server is out of disk space; nothing was stored. Try again once an operator has freed space.',
  },
];

/** `components.responses`: one reusable response per CONTRACT.md error status, with an example body. */
export function errorResponseComponents(): Record<string, unknown> {
  return Object.fromEntries(
    ERROR_RESPONSES.map((entry) => [
      entry.name,
      {
        description: entry.description,
        ...(entry.headers ? { headers: entry.headers } : {}),
        content: {
          'application/json': {
            schema: { $ref: '#/components/schemas/Error' },
            example: { error: { code: entry.code, message: entry.message, ...(entry.details ? { details: entry.details } : {}) } },
          },
        },
      },
    ]),
  );
}

/**
 * The error responses an operation documents, as references to
 * {@link errorResponseComponents}: credential errors only where a credential
 * is checked (401 also where the body carries the proof), verification
 * failures only on routes that change state.
 */
export function errorResponsesOf(route: AnyRoute<unknown>): Record<string, { $ref: string }> {
  const authenticated = route.auth.kind !== 'none';
  const proof = route.auth.kind === 'none' && route.auth.credentialField !== undefined;
  const writes = route.effects?.readOnly !== true;
  const applies: Record<string, boolean> = { '401': authenticated || proof, '403': authenticated, '422': writes, '507': writes };
  return Object.fromEntries(
    ERROR_RESPONSES.filter((entry) => applies[entry.status] ?? true).map((entry) => [
      entry.status,
      { $ref: `#/components/responses/${entry.name}` },
    ]),
  );
}
