import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { Logger } from 'pino';
import type { AuditOutcome } from '../audit/audit-event.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { Principal } from '../auth/principal.js';
import { clientAddress } from '../kernel/client-address.js';
import type { AnyModule, AnyRoute } from '../kernel/module.js';
import type { CoreMetrics } from './core-metrics.js';

/** Per-request values the HTTP pipeline shares between its middleware and route handlers. */
export type RequestVariables = {
  requestId: string;
  principal: Principal | null;
  /** Name of the module whose route answers (unset for kernel endpoints and surfaces). */
  module: string;
  client: string;
  /** The parsed request body of a module route (for the audit log's target). */
  body?: unknown;
  /** What the route handler returned (for the audit log's target). */
  result?: unknown;
  /** The agent the handler said the call concerns (`RouteContext.auditAgent`). */
  auditAgent?: string;
};

/** Route patterns of middleware only: a request that ends on one of them matched no route. */
const UNMATCHED_PATTERNS = new Set(['*', '/*', '/functions/v1/*']);

/** Options of {@link observeRequests}. */
export interface RequestObserverOptions {
  modules: readonly AnyModule[];
  /** Base path of module routes (`/functions/v1`). */
  base: string;
  logger: Logger;
  trustProxyHops: number;
  /** Null when metrics are off. */
  metrics: CoreMetrics | null;
  audit: AuditLog;
}

function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

function outcomeOf(status: number): AuditOutcome {
  if (status < 400) return 'success';
  return status === 401 || status === 403 || status === 429 ? 'denied' : 'failed';
}

/**
 * A request id the caller may choose: visible ASCII only, so that it is
 * logged and echoed in a header unchanged (Node reads header values as
 * Latin-1, so other text would come back garbled).
 */
const REQUEST_ID = /^[\x21-\x7e]+$/;

/**
 * The id of a request: its `x-request-id` header cut to 128 characters when
 * that is visible ASCII (printable, no spaces), otherwise a new UUID v4.
 * @param sent the header's value, `null`/`undefined` when absent.
 */
export function requestIdFrom(sent: string | null | undefined): string {
  const cut = sent?.slice(0, 128);
  return cut && REQUEST_ID.test(cut) ? cut : randomUUID();
}

/** The agent a principal acts as (none for the bridge key). */
function agentOf(principal: Principal | null): string | undefined {
  return principal && principal.kind !== 'bridge' ? principal.agentId : undefined;
}

/**
 * The first middleware of the HTTP app: gives each request its id
 * (`x-request-id`, taken from the request when it sends one of visible
 * ASCII characters, cut to 128; otherwise a new UUID) and client address (an in-process request, made with
 * `app.request(url, init, { client })` as the console does for its
 * operator, names its own; Node's server always passes `incoming`, so a
 * network request cannot), and when the response is ready:
 * - metrics: duration by module, route pattern and status class, requests
 *   in flight, 403s and 429s (labels never carry ids or caller addresses);
 * - one JSON log line (pino): request id, module, route, method, status,
 *   duration, credential kind and id, agent id; never a body, header value
 *   or query string;
 * - the audit log: routes declaring `audit` record their action, and any
 *   other call made with the bridge key records `bridge.use` (an audit
 *   write failure is logged and counted; the response stands), except a
 *   read-only route called in process with `auditReads: false` in the
 *   request's env (the console's page views).
 */
export function observeRequests(options: RequestObserverOptions): MiddlewareHandler<{ Variables: RequestVariables }> {
  const { logger, metrics, audit } = options;
  const routes = new Map<string, { module: string; route: AnyRoute<unknown> }>();
  for (const module of options.modules) {
    for (const route of module.routes as readonly AnyRoute<unknown>[]) {
      routes.set(`${options.base}/${module.name}${route.path}`, { module: module.name, route });
    }
  }

  return async (c, next) => {
    const started = performance.now();
    const requestId = requestIdFrom(c.req.header('x-request-id'));
    c.set('requestId', requestId);
    c.set('principal', null);
    const env = c.env as { incoming?: IncomingMessage; client?: string; auditReads?: boolean } | undefined;
    // Only an in-process caller (the console) can ask for its reads to go unaudited; a network request cannot.
    const auditReads = env?.incoming !== undefined || env?.auditReads !== false;
    c.set(
      'client',
      env?.incoming === undefined && typeof env?.client === 'string'
        ? env.client
        : clientAddress({ incoming: env?.incoming, forwardedFor: c.req.header('x-forwarded-for'), trustProxyHops: options.trustProxyHops }),
    );
    c.header('x-request-id', requestId);
    metrics?.httpInFlight.inc();
    try {
      await next();
    } finally {
      metrics?.httpInFlight.dec();
    }
    const status = c.res.status;
    const principal = c.get('principal') ?? null;
    const moduleRoute = c.get('module') === undefined ? undefined : routes.get(c.req.path);
    const module = moduleRoute?.module ?? 'kernel';
    const pattern = routePath(c);
    const route = moduleRoute ? moduleRoute.route.path : UNMATCHED_PATTERNS.has(pattern) ? 'unmatched' : pattern;
    const seconds = (performance.now() - started) / 1000;

    if (metrics) {
      metrics.httpDuration.observe({ module, route, status_class: statusClass(status) }, seconds);
      if (status === 429) metrics.rateLimited.inc({ module, route });
      if (status === 403) metrics.authFailures.inc({ reason: 'forbidden' });
    }

    const unauditedRead = !auditReads && moduleRoute?.route.effects?.readOnly === true;
    if (principal && (moduleRoute?.route.audit || (principal.kind === 'bridge' && !unauditedRead))) {
      const declared = moduleRoute?.route.audit;
      const body = c.get('body');
      const result = status < 400 ? c.get('result') : undefined;
      let target: string | null = `${module}${route}`;
      let subject = agentOf(principal);
      try {
        if (declared) {
          target = body === undefined ? null : declared.target(body, result);
          subject = c.get('auditAgent') ?? (body === undefined ? undefined : declared.agent?.(body)) ?? agentIdIn(body) ?? subject;
        } else {
          // A bridge.use is about the agent the body names, so the audit log's agent filter finds it.
          subject = agentIdIn(body) ?? subject;
        }
        await audit.record({
          action: declared?.action ?? 'bridge.use',
          outcome: outcomeOf(status),
          target,
          actor: principal,
          agentId: subject ?? null,
          client: c.get('client'),
          requestId,
          detail: status < 400 ? null : { status },
        });
      } catch (error) {
        metrics?.auditWriteFailures.inc();
        logger.error({ err: error, request_id: requestId }, 'audit: could not record the event');
      }
    }

    if (logger.isLevelEnabled('info')) {
      logger.info(
        {
          request_id: requestId,
          module,
          route,
          method: c.req.method,
          status,
          ms: Math.round(seconds * 10_000) / 10,
          credential: principal?.kind ?? 'none',
          ...(principal && principal.kind !== 'bridge'
            ? { credential_id: principal.kind === 'device' ? principal.deviceId : principal.delegationId, agent_id: principal.agentId }
            : {}),
        },
        'request',
      );
    }
  };
}

/** `agent_id` of a parsed body, when it has one. */
function agentIdIn(body: unknown): string | undefined {
  const value = (body as { agent_id?: unknown } | null | undefined)?.agent_id;
  return typeof value === 'string' ? value : undefined;
}
