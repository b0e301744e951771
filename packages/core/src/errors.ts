/**
 * Domain errors. Business code throws these; the kernel maps each to the
 * CONTRACT.md error body `{ error: { code, message, details? } }` once.
 */
export class AgentInfraError extends Error {
  /** HTTP status the kernel answers with. */
  readonly status: number;
  /** snake_case machine-readable code (CONTRACT.md "Errors"). */
  readonly code: string;
  /** Optional structured data for the caller (field list, record to publish …). Never secrets. */
  readonly details: unknown;

  constructor(status: number, code: string, message: string, options?: { details?: unknown; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.details = options?.details;
  }
}

/** 400 `invalid_request`: the body is not JSON or fails the schema. `details` lists the fields. */
export class InputError extends AgentInfraError {
  constructor(message: string, details?: unknown) {
    super(400, 'invalid_request', message, { details });
  }
}

/** 401 `unauthenticated`: no credential, or an unknown, expired or revoked one. */
export class AuthenticationError extends AgentInfraError {
  constructor(message = 'A valid credential is required: send Authorization: Bearer <key>.') {
    super(401, 'unauthenticated', message);
  }
}

/** 403 `forbidden`: the credential is valid but not for this agent or permission. */
export class NotAllowedError extends AgentInfraError {
  constructor(message: string) {
    super(403, 'forbidden', message);
  }
}

/** 404 `not_found`: the named record does not exist or is not visible to the caller. */
export class NotFoundError extends AgentInfraError {
  constructor(message: string) {
    super(404, 'not_found', message);
  }
}

/** 409 `conflict`: the record already exists or is in a state that forbids the change. */
export class ConflictError extends AgentInfraError {
  constructor(message: string, details?: unknown) {
    super(409, 'conflict', message, { details });
  }
}

/** 408 `request_timeout`: the request body did not arrive in time; the connection is closed after the answer. */
export class RequestTimeoutError extends AgentInfraError {
  constructor(message: string) {
    super(408, 'request_timeout', message);
  }
}

/**
 * 499 `client_closed_request` (nginx's convention): the client closed the
 * connection before its request body arrived. Nobody receives the answer;
 * the status is for the log line and the metrics, which then count a
 * client's abort as a 4xx rather than a server failure.
 */
export class ClientClosedRequestError extends AgentInfraError {
  constructor() {
    super(499, 'client_closed_request', 'The client closed the connection before the request body arrived.');
  }
}

/** 413 `payload_too_large`: the body or a declared size is over the limit (or over what a quota has left; `details` says). */
export class PayloadTooLargeError extends AgentInfraError {
  constructor(message: string, details?: unknown) {
    super(413, 'payload_too_large', message, { details });
  }
}

/** 415 `unsupported_media_type`: a JSON route was sent a body that is not `application/json`. */
export class UnsupportedMediaTypeError extends AgentInfraError {
  constructor(message: string) {
    super(415, 'unsupported_media_type', message);
  }
}

/** 422 `verification_failed`: a check on supplied evidence (hash, DNS record) failed. */
export class VerificationError extends AgentInfraError {
  constructor(message: string, details?: unknown) {
    super(422, 'verification_failed', message, { details });
  }
}

/** 429 `rate_limited`: a quota or rate limit is exhausted; the kernel sets `Retry-After`. */
export class RateLimitError extends AgentInfraError {
  /** Seconds until a retry can succeed (whole seconds, at least 1). */
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterMs: number) {
    super(429, 'rate_limited', message, { details: { retry_after_seconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) } });
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  }
}

/**
 * 503 `unavailable`: a dependency the request needs (the database, Redis,
 * the blob store) could not be reached or refused to start the work, so the
 * request did not take effect; `Retry-After` says when to try again
 * (RFC 9110 §15.6.4). Failures that may have taken effect (a connection lost
 * while a statement ran) stay 500: only the caller knows whether repeating
 * is safe.
 */
export class ServiceUnavailableError extends AgentInfraError {
  /** Seconds to wait before retrying (whole seconds, at least 1). */
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(503, 'unavailable', message, { details: { retry_after_seconds: retryAfterSeconds } });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * 507 `insufficient_storage` (RFC 4918 §11.5): the server's disk (or its
 * database's size limit) is full, so the write was refused whole. Retrying
 * helps only once an operator frees space.
 */
export class InsufficientStorageError extends AgentInfraError {
  constructor(message: string) {
    super(507, 'insufficient_storage', message);
  }
}

/** The CONTRACT.md error body. */
export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/** Builds the CONTRACT.md body for a domain error. */
export function errorBody(error: AgentInfraError): ErrorBody {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details === undefined ? {} : { details: error.details }),
    },
  };
}

/**
 * The CONTRACT.md answer to a method a path does not take: 405
 * `method_not_allowed` (RFC 9110 §15.5.6) with the `Allow` header listing
 * `allow`, and `headers` added (CORS, say).
 */
export function methodNotAllowed(method: string, allow: readonly string[], headers: Record<string, string> = {}): Response {
  const body: ErrorBody = { error: { code: 'method_not_allowed', message: `${method} is not allowed here; use ${allow.join(' or ')}.` } };
  return Response.json(body, { status: 405, headers: { ...headers, allow: allow.join(', ') } });
}
