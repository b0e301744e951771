import type { IncomingMessage } from 'node:http';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { agentsToVerify, authorize, requireRegisteredAgents } from '../auth/authorize.js';
import { readCredential } from '../auth/credential-transport.js';
import type { FailedAuthLimit } from '../auth/failed-auth-limit.js';
import type { Principal } from '../auth/principal.js';
import { equalsSecret } from '../credentials.js';
import { dependencyFailure } from '../dependency-failure.js';
import {
  AgentInfraError,
  AuthenticationError,
  errorBody,
  methodNotAllowed,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitError,
  RequestTimeoutError,
  ServiceUnavailableError,
} from '../errors.js';
import type { RequestVariables } from '../observability/request-observer.js';
import type { RateLimiter } from '../ports/rate-limiter.js';
import { withinDeadline } from './body-deadline.js';
import { refuseBodiesOnBodylessMethods } from './bodyless-methods.js';
import { corsHeaders } from './cors.js';
import { createHandlerAdmission, HANDLER_TURN_BUDGET_MS } from './handler-admission.js';
import { readJsonBody } from './json-body.js';
import type { JsonParsePool } from './json-parse-pool.js';
import { jsonResponse } from './json-response.js';
import type { AnyModule, AnyRoute } from './module.js';
import { fieldIssues, parseRequest } from './request-parse.js';

/** Base path of every module (SPEC.md: `{base_url}` ends with `/functions/v1`). */
export const FUNCTIONS_BASE = '/functions/v1';

/** A raw HTTP endpoint an adapter serves at `path` and below (any method, any body). */
export interface HttpMount {
  /** Path prefix, e.g. `/storage/v1`. */
  path: string;
  /**
   * Answers a request under `path`. Errors it throws become CONTRACT.md bodies.
   * @param body the request body as byte chunks; read it instead of
   *   `request.body`: on @hono/node-server it is Node's request stream, which
   *   costs about a third less CPU per byte than a web `ReadableStream`.
   * @param info.client the caller's address as the API sees it (for the failed-authentication limit).
   * @param info.requestId the request's id, which the access log line and the `x-request-id` response header carry
   *   (the header is added to the answer when the mount does not set it).
   * @param info.identify names the caller the mount authenticated, for the access log line and the metrics.
   */
  fetch(request: Request, body: AsyncIterable<Uint8Array>, info?: MountRequestInfo): Response | Promise<Response>;
}

/** `response` with the `x-request-id` header; copied first when its headers are read-only (`Response.redirect`, a `fetch` answer). */
function withRequestId(response: Response, requestId: string): Response {
  try {
    response.headers.set('x-request-id', requestId);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.set('x-request-id', requestId);
    return copy;
  }
}

/** What the API tells a mount about a request (see {@link HttpMount.fetch}). */
export interface MountRequestInfo {
  client: string;
  requestId: string;
  identify(principal: Principal): void;
  /** Logs a failure the mount answered itself (a dependency failure it turned into a 503 or 507), with the request id. */
  logFailure(error: unknown): void;
}

/** What the HTTP layer needs from the kernel. */
export interface HttpOptions {
  modules: readonly AnyModule[];
  logger: Logger;
  bridgeKey: string;
  bodyLimitBytes: number;
  /** Milliseconds a JSON request body may take to arrive (408 after, and the connection is closed). */
  bodyTimeoutMs: number;
  /** Parses large JSON bodies off the event loop (see `readJsonBody`); without it every body is parsed on it. */
  jsonPool?: JsonParsePool;
  mounts: readonly HttpMount[];
  rateLimitPerMinute: number;
  /** Failed authentications per client address (see {@link createFailedAuthLimit}). */
  failedAuth: FailedAuthLimit;
  validateResponses: boolean;
  rateLimiter: () => RateLimiter;
  verifyCredential: (credential: string) => Promise<Principal | null>;
  /** Which of the agents a bridge-key call names are not registered (see `CredentialVerifier.missingAgents`). */
  missingAgents: (agentIds: readonly string[]) => Promise<string[]>;
  serviceOf: (moduleName: string) => unknown;
  /** `degraded`: an optional dependency (the rate-limit store) is down; the server still serves. */
  ready: () => Promise<{ ok: boolean; degraded?: boolean; checks: Record<string, string> }>;
  /** The OpenAPI document, the same on every call (it is serialized once). */
  openapi: () => unknown;
  /** The first middleware: request id, client address, metrics, audit, the log line (see `observeRequests`). */
  observe: MiddlewareHandler<{ Variables: RequestVariables }>;
}

type Variables = RequestVariables;

/** The JSON error response for a domain error (plus `Retry-After` / `WWW-Authenticate` where they apply). */
export function errorResponse(c: Context, error: AgentInfraError): Response {
  if (error instanceof RateLimitError || error instanceof ServiceUnavailableError) c.header('Retry-After', String(error.retryAfterSeconds));
  if (error.status === 401) c.header('WWW-Authenticate', 'Bearer');
  // A body refused while it arrived is never read to its end: close the connection so the client does not reuse it.
  // (One parsed whole, refused later for a declared size or a quota, leaves the connection usable.)
  const parsed = (c as Context<{ Variables: Variables }>).get('body') !== undefined;
  if ((error instanceof PayloadTooLargeError || error instanceof RequestTimeoutError) && !parsed) c.header('Connection', 'close');
  return c.json(errorBody(error), error.status as 400);
}

/** The request body as chunks: Node's request stream on @hono/node-server, else the web stream (empty when there is none). */
function bodyChunks(c: Context): AsyncIterable<Uint8Array> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming) return incoming as AsyncIterable<Uint8Array>;
  const stream = c.req.raw.body;
  return stream ? (stream as unknown as AsyncIterable<Uint8Array>) : (async function* () {})();
}

/**
 * Builds the Hono app: `/health`, `/ready`, `/openapi.json`, and every
 * module route under `/functions/v1/<module>/<path>` (POST only; other
 * methods 405 with `Allow: POST`; unknown paths 404 JSON). Parsing,
 * validation (unknown fields rejected), authentication, authorization,
 * per-credential rate limits, error mapping and one log line per request
 * happen here once.
 */
export function createHttpApp(options: HttpOptions): { app: Hono<{ Variables: Variables }>; mount: (mount: HttpMount) => void } {
  const app = new Hono<{ Variables: Variables }>();
  const { logger } = options;
  const isBridgeKey = equalsSecret(options.bridgeKey);
  const { failedAuth } = options;
  const admission = createHandlerAdmission({ budgetMs: HANDLER_TURN_BUDGET_MS });

  app.use('*', options.observe);
  app.use('*', refuseBodiesOnBodylessMethods());

  app.use(
    `${FUNCTIONS_BASE}/*`,
    corsHeaders({
      allowMethods: ['POST', 'OPTIONS'],
      allowHeaders: ['authorization', 'apikey', 'content-type', 'x-client-info', 'x-request-id', 'accept'],
      exposeHeaders: ['x-request-id', 'retry-after'],
      maxAgeSeconds: 600,
    }),
  );

  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.get('/ready', async (c) => {
    const result = await options.ready();
    const status = !result.ok ? 'not_ready' : result.degraded ? 'degraded' : 'ready';
    return c.json({ status, checks: result.checks }, result.ok ? 200 : 503);
  });
  // Serialized once: 260 KB of JSON.stringify per request let pipelined GETs fill the heap; one buffer is shared.
  let openapiBytes: Uint8Array<ArrayBuffer> | undefined;
  app.get('/openapi.json', (c) => {
    openapiBytes ??= Buffer.from(JSON.stringify(options.openapi()));
    return c.body(openapiBytes, 200, { 'content-type': 'application/json' });
  });
  for (const path of ['/health', '/ready', '/openapi.json']) app.all(path, (c) => methodNotAllowed(c.req.method, ['GET', 'HEAD']));

  const mount = (target: HttpMount) => {
    const handle = async (c: Context<{ Variables: Variables }>) => {
      const requestId = c.get('requestId');
      const response = await target.fetch(c.req.raw, bodyChunks(c), {
        client: c.get('client'),
        requestId,
        identify: (principal) => c.set('principal', principal),
        logFailure: (error) => logger.error({ err: error, request_id: requestId, path: c.req.path }, 'dependency failure'),
      });
      return response.headers.has('x-request-id') ? response : withRequestId(response, requestId);
    };
    app.all(target.path, handle);
    app.all(`${target.path}/*`, handle);
  };
  for (const target of options.mounts) mount(target);

  for (const module of options.modules) {
    for (const route of module.routes as readonly AnyRoute<unknown>[]) {
      const path = `${FUNCTIONS_BASE}/${module.name}${route.path}`;
      app.post(path, async (c) => {
        c.set('module', module.name);
        const principal = await authenticate(c, route, options, isBridgeKey, failedAuth);
        await enforceRateLimit(principal, options);
        const raw = await readJsonBody({
          contentType: c.req.header('content-type'),
          contentLength: c.req.header('content-length'),
          contentEncoding: c.req.header('content-encoding'),
          chunks: withinDeadline(bodyChunks(c), options.bodyTimeoutMs),
          limitBytes: options.bodyLimitBytes,
          pool: options.jsonPool,
        });
        const body = parseRequest(route.request, raw);
        c.set('body', body);
        const agentId = authorize(route.auth, principal, body);
        await requireRegisteredAgents(agentsToVerify(route.auth, principal, body), options.missingAgents);
        const admitted = admission.enter();
        if (admitted) await admitted;
        const result = await route
          .handler({
            body,
            principal,
            agentId,
            service: options.serviceOf(module.name),
            auditAgent: (agent) => c.set('auditAgent', agent),
            c,
          })
          .catch(async (error: unknown) => {
            // A route without a header credential checks a proof in its body (a grant token): a bad one counts like a bad key.
            if (principal === null && error instanceof AuthenticationError) await failedAuth.fail(c.get('client'), 'unknown');
            throw error;
          });
        c.set('result', result);
        if (result instanceof Response) return result;
        if (options.validateResponses) {
          const checked = route.response.safeParse(result);
          if (!checked.success) {
            throw new Error(`Response of ${path} does not match its schema: ${JSON.stringify(fieldIssues(checked.error))}`);
          }
        }
        return jsonResponse(c, result, route.status ?? 200);
      });
      app.all(path, (c) => methodNotAllowed(c.req.method, ['POST']));
    }
  }

  app.notFound((c) => errorResponse(c, new NotFoundError(`No route ${c.req.method} ${c.req.path}.`)));
  app.onError((error, c) => {
    if (error instanceof AgentInfraError) return errorResponse(c, error);
    const failure = dependencyFailure(error);
    if (failure) {
      logger.error({ err: error, request_id: c.get('requestId'), path: c.req.path, status: failure.status }, 'dependency failure');
      return errorResponse(c, failure);
    }
    logger.error({ err: error, request_id: c.get('requestId'), path: c.req.path }, 'unhandled error');
    return c.json({ error: { code: 'internal', message: 'Internal error. The request id is in the x-request-id header.' } }, 500);
  });
  return { app, mount };
}

async function authenticate(
  c: Context<{ Variables: Variables }>,
  route: AnyRoute<unknown>,
  options: HttpOptions,
  isBridgeKey: (credential: string) => boolean,
  failedAuth: FailedAuthLimit,
) {
  const client = c.get('client');
  await failedAuth.check(client);
  if (route.auth.kind === 'none') return null;
  const credential = readCredential({ get: (name) => c.req.header(name) });
  if (!credential) {
    await failedAuth.fail(client, 'missing');
    throw new AuthenticationError();
  }
  const principal: Principal | null = isBridgeKey(credential) ? { kind: 'bridge' } : await options.verifyCredential(credential);
  if (!principal) {
    await failedAuth.fail(client, 'unknown');
    throw new AuthenticationError('The credential is unknown, expired or revoked.');
  }
  c.set('principal', principal);
  return principal;
}

/**
 * Counts a request against its credential's per-minute limit, before its
 * body is read: requests that then fail validation or authorization count
 * too, so a caller cannot send unlimited bad requests. Each device key has
 * its own window (the operator issues them). Delegation tokens share one
 * window per pair of granting and receiving agent: an agent can mint
 * delegations itself and would otherwise get a fresh limit with each, while
 * two agents it delegates to do not use up each other's window. Tokens made
 * with a token count as the chain's first receiving agent's
 * (`principal.toAgent`), so a holder gains no window by delegating on. The bridge
 * key and unauthenticated routes are not limited here.
 * @param cost units counted (1 per request; a JSON-RPC batch at /mcp counts each message).
 * @throws RateLimitError (429 with Retry-After) over the limit.
 */
export async function enforceRateLimit(
  principal: Principal | null,
  options: Pick<HttpOptions, 'rateLimitPerMinute' | 'rateLimiter'>,
  cost = 1,
): Promise<void> {
  if (!principal || principal.kind === 'bridge' || options.rateLimitPerMinute === 0) return;
  if (cost > options.rateLimitPerMinute) {
    // More than a whole minute's worth at once: never allowed, whatever the window holds (the store would refuse the call).
    throw new RateLimitError(`One request of ${cost} counts more than the limit of ${options.rateLimitPerMinute} per minute.`, 60_000);
  }
  const key = principal.kind === 'device' ? `http:${principal.deviceId}` : `http:delegations:${principal.agentId}>${principal.toAgent}`;
  const decision = await options.rateLimiter().consume({ key, limit: options.rateLimitPerMinute, windowMs: 60_000, cost });
  if (!decision.allowed) {
    const whose =
      principal.kind === 'device'
        ? 'this device key'
        : `the delegation tokens agent "${principal.agentId}" gave agent "${principal.toAgent}"`;
    throw new RateLimitError(
      `Rate limit of ${options.rateLimitPerMinute} requests per minute for ${whose} reached.`,
      decision.retryAfterMs,
    );
  }
}
