import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { type DependencyContainer, container as globalContainer, instanceCachingFactory } from 'tsyringe';
import { type AuditLog, createAuditLog } from '../audit/audit-log.js';
import { createRefusalTally } from '../audit/refusal-tally.js';
import { failOpenRateLimiter, probeRateLimiter } from '../auth/fail-open-rate-limiter.js';
import { createFailedAuthLimit } from '../auth/failed-auth-limit.js';
import { createPermissionRegistry } from '../auth/permission-registry.js';
import { type CredentialVerifier, credentialsPort, type Principal } from '../auth/principal.js';
import { type CoreConfig, parseConfigSection } from '../config.js';
import { equalsSecret } from '../credentials.js';
import { createHttpDelivery } from '../delivery/index.js';
import { publicReason } from '../dependency-failure.js';
import { JobRunner, pruneFinishedJobs } from '../jobs/runner.js';
import { createLogger } from '../logger.js';
import { createCoreMetrics } from '../observability/core-metrics.js';
import { diskCheck, type WatchedDisk } from '../observability/disk-space.js';
import { guardedMetricsMount, type MetricsListener, startMetricsListener } from '../observability/metrics-endpoint.js';
import { createMetricsRegistry, type MetricsRegistry } from '../observability/metrics-registry.js';
import { observedDelivery, observedEmbedder } from '../observability/observed-adapters.js';
import { observedFailedAuth } from '../observability/observed-failed-auth.js';
import { observeRequests } from '../observability/request-observer.js';
import type { BlobStore } from '../ports/blob-store.js';
import { type Clock, systemClock } from '../ports/clock.js';
import type { Embedder } from '../ports/embedder.js';
import type { HttpDelivery } from '../ports/http-delivery.js';
import type { Lock } from '../ports/lock.js';
import type { RateLimiter } from '../ports/rate-limiter.js';
import type { SecretBox } from '../ports/secret-box.js';
import type { SqlDatabase } from '../ports/sql-database.js';
import { createMemoryLock } from '../services/memory-lock.js';
import { createMemoryRateLimiter } from '../services/memory-rate-limiter.js';
import { createAesGcmSecretBox } from '../services/secret-box.js';
import { createSettingsService } from '../settings/settings-service.js';
import { createApiServer } from './api-server.js';
import { type ConnectionDrain, trackConnectionDrain } from './connection-drain.js';
import { createHttpApp, enforceRateLimit, FUNCTIONS_BASE, type HttpMount } from './http.js';
import { createJsonParsePool } from './json-parse-pool.js';
import { migrateLatest, migrationSetsOf, pendingMigrations, refuseNewerSchema } from './migrations.js';
import type { AnyModule, PortMap, PortName } from './module.js';
import { buildOpenApiDocument } from './openapi.js';
import { limitPipelinedRequests } from './pipelined-requests.js';
import type { AnyPortRef } from './port-ref.js';
import { closeQuietConnections } from './quiet-connections.js';

/** Adapters the host (CLI, embedding app, tests) hands to the kernel. Missing optional ones get in-process defaults. */
export interface KernelAdapters {
  sql: SqlDatabase;
  embedder?: Embedder;
  blobStore?: BlobStore;
  delivery?: HttpDelivery;
  rateLimiter?: RateLimiter;
  lock?: Lock;
  clock?: Clock;
  secretBox?: SecretBox;
  /**
   * Raw HTTP endpoints outside `/functions/v1` that an adapter serves itself
   * (e.g. the local blob store's signed upload/download URLs), mounted at
   * `path` and everything below it.
   */
  mounts?: readonly HttpMount[];
  /** Called last on stop, for resources the adapters share (e.g. one Redis connection behind the limiter and lock). */
  dispose?: () => Promise<void>;
  /**
   * Folders on local disks the adapters write to (the SQLite file's, the fs
   * blob store's): `/ready` reports `degraded` with `checks["disk:<name>"]`
   * when one has under 64 MiB, or under 1 % of the disk (at most 1 GiB),
   * free, and `/metrics` exports
   * `agentinfra_disk_free_bytes{disk}`.
   */
  disks?: readonly WatchedDisk[];
}

/** Options of {@link createKernel}. */
export interface KernelOptions {
  /** The validated core config (see `loadServerConfig`). */
  config: CoreConfig;
  /** Modules to load, in order. */
  modules: readonly AnyModule[];
  /**
   * Each module's config section, by module name; the kernel validates it
   * with the module's schema (missing sections take the defaults).
   */
  moduleConfigs?: Readonly<Record<string, unknown>>;
  adapters: KernelAdapters;
  /** Defaults to a pino logger at `config.log.level`. */
  logger?: Logger;
  /** Version string for the OpenAPI document. */
  version?: string;
  /**
   * Surfaces built on the kernel and served beside the API (the MCP server at
   * `/mcp`, the console at `/console`, the docs page at `/docs`): each is
   * called once with the kernel and mounted at its `path` and below.
   */
  surfaces?: readonly KernelSurface[];
}

/** Builds an HTTP surface from the kernel (its modules, routes, credential check and in-process `app.request`). */
export type KernelSurface = (kernel: Kernel) => HttpMount;

/** A running or runnable server instance. */
export interface Kernel {
  readonly app: Hono;
  readonly config: CoreConfig;
  readonly logger: Logger;
  readonly jobs: JobRunner;
  readonly sql: SqlDatabase;
  /** The audit log of security events (also the `audit` port). */
  readonly audit: AuditLog;
  /** This kernel's Prometheus registry (also the `metrics` port). */
  readonly metrics: MetricsRegistry;
  /** The loaded modules, in order (their route declarations drive the generated surfaces). */
  readonly modules: readonly AnyModule[];
  /**
   * Resolves a bearer credential: the bridge key, a device key or a
   * delegation token. With `client` (the caller's address), failures count
   * against the failed-authentication limit as on the HTTP API.
   * @returns the principal, or `null` when missing, unknown, expired or revoked.
   * @throws RateLimitError (429) when `client` is over the failed-authentication limit.
   */
  authenticate(credential: string | null, options?: { client?: string }): Promise<Principal | null>;
  /**
   * Counts `cost` units (default 1) against a device key's or delegation
   * token's per-minute limit (`http.rateLimitPerMinute`), as every API
   * request does; surfaces beside the API (`/mcp`) call it for their own
   * requests. The bridge key is not limited.
   * @throws RateLimitError (429) over the limit.
   */
  rateLimit(principal: Principal, options?: { cost?: number }): Promise<void>;
  /** Applies core and module migrations. @returns what was applied per module. */
  migrate(): Promise<Array<{ module: string; applied: string[] }>>;
  /** Migrates, runs module start hooks (start-up checks) and starts the job runner. */
  start(): Promise<void>;
  /**
   * Starts the HTTP server (after {@link Kernel.start}), and the metrics
   * listener when `metrics.port` is set.
   * @returns the URL with the real port (also when `port` is 0), and the metrics listener's URL.
   */
  listen(options?: { port?: number; host?: string }): Promise<{ url: string; port: number; metricsUrl?: string }>;
  /** Graceful stop: stop accepting, finish in-flight requests and jobs, run module stop hooks, close adapters. */
  stop(): Promise<void>;
  /** The service of a loaded module. @throws Error when no such module is loaded. */
  service<S>(moduleName: string): S;
  /** The OpenAPI 3.1 document. */
  openapi(): Record<string, unknown>;
  /** What started modules report for the banner (listeners, modes), in module order. */
  describeModules(): string[];
  /**
   * Readiness: database reachable (pinged on every call) and every migration applied (re-read at most once a minute
   * once found applied); `degraded` when an optional dependency is down (the rate-limit store) or a watched disk is low.
   */
  ready(): Promise<{ ok: boolean; degraded?: boolean; checks: Record<string, string> }>;
}

/**
 * How long `/ready` trusts that every migration is applied once it found
 * them so, ms: only a rollback could change it, and checking reads every
 * module's migration table (about 70 statements on PostgreSQL).
 */
const READY_MIGRATIONS_TTL_MS = 60_000;

/**
 * Builds a kernel: registers adapters in a tsyringe container of its own
 * (never the global one), a child container per module with its ports,
 * the ports modules provide to each other, the job runner with every
 * module's jobs, and the HTTP app with every module's routes.
 * @throws Error when a module needs a port nobody provides, or two modules share a name.
 */
export function createKernel(options: KernelOptions): Kernel {
  const { config, modules } = options;
  const logger = options.logger ?? createLogger({ level: config.log.level, format: config.log.format });
  const clock = options.adapters.clock ?? systemClock;
  const sql = options.adapters.sql;
  const root: DependencyContainer = globalContainer.createChildContainer();
  const services = new Map<string, unknown>();
  const names = new Set<string>();
  for (const module of modules) {
    if (names.has(module.name)) throw new Error(`Module "${module.name}" is loaded twice.`);
    names.add(module.name);
  }

  const metrics = createMetricsRegistry({
    onCollectError: (metric, error) => logger.warn({ err: error, metric }, 'metrics: a gauge could not be collected'),
  });
  const disks = options.adapters.disks ?? [];
  const coreMetrics = createCoreMetrics({ metrics, knex: sql.knex, clock, disks });
  /** Per-request measurements (and the embedder's and webhook deliveries'), off with `metrics.enabled: false`. */
  const requestMetrics = config.metrics.enabled ? coreMetrics : null;
  const audit = createAuditLog({ knex: sql.knex, clock, enabled: config.audit.enabled });
  const settings = createSettingsService({ knex: sql.knex, clock });

  const jobs = new JobRunner({
    sql,
    clock,
    logger: logger.child({ component: 'jobs' }),
    observer: {
      claimed: (name, latenessMs) => coreMetrics.jobClaimLateness.observe({ job: name }, latenessMs / 1000),
      failed: (name, final) => coreMetrics.jobFailures.inc({ job: name, final: String(final) }),
    },
    pollIntervalMs: config.jobs.pollIntervalMs,
    concurrency: config.jobs.concurrency,
    groupConcurrency: config.jobs.groupConcurrency,
    retryBaseMs: config.jobs.retryBaseMs,
    retryMaxMs: config.jobs.retryMaxMs,
  });

  const value = <K extends PortName>(name: K, port: PortMap[K]) => root.register(name, { useValue: port });
  value('sql', sql);
  value('clock', clock);
  value('config', config);
  value('jobs', jobs);
  value('logger', logger);
  value(
    'secretBox',
    options.adapters.secretBox ?? createAesGcmSecretBox({ masterKey: config.masterKey, previousMasterKeys: config.previousMasterKeys }),
  );
  value('rateLimiter', options.adapters.rateLimiter ?? createMemoryRateLimiter({ clock }));
  value('lock', options.adapters.lock ?? createMemoryLock({ clock }));
  value('settings', settings);
  value('permissions', createPermissionRegistry(modules));
  value('audit', audit);
  value('metrics', metrics);
  const { embedder } = options.adapters;
  if (embedder) value('embedder', requestMetrics ? observedEmbedder(embedder, requestMetrics) : embedder);
  if (options.adapters.blobStore) value('blobStore', options.adapters.blobStore);
  const delivery = options.adapters.delivery ?? createHttpDelivery({ allowPrivate: config.allowPrivateCallbacks, clock });
  value('delivery', requestMetrics ? observedDelivery(delivery, requestMetrics) : delivery);

  const serviceOf = (moduleName: string): unknown => {
    if (!services.has(moduleName)) throw new Error(`Module "${moduleName}" is not loaded.`);
    return services.get(moduleName);
  };

  let verifier: CredentialVerifier | null | undefined;
  /** The verifier a module (identity) provides, resolved on first use; `null` when no module provides one. */
  const credentialVerifier = () => {
    verifier ??= root.isRegistered(credentialsPort.id) ? root.resolve<CredentialVerifier>(credentialsPort.id) : null;
    return verifier;
  };
  const verifyCredential = async (credential: string): Promise<Principal | null> => credentialVerifier()?.verify({ credential }) ?? null;
  // Without the identity module no agent is registered anywhere and the bridge key is the only credential: nothing to check against.
  const missingAgents = async (agentIds: readonly string[]): Promise<string[]> => credentialVerifier()?.missingAgents({ agentIds }) ?? [];
  value('agents', { missing: ({ agentIds }) => missingAgents(agentIds) });

  for (const module of modules) {
    for (const { ref, factory } of module.provides ?? []) {
      if (root.isRegistered(ref.id)) throw new Error(`Port "${ref.id}" is provided twice (again by "${module.name}").`);
      root.register(ref.id, { useFactory: instanceCachingFactory(() => factory(serviceOf(module.name))) });
    }
  }

  for (const module of modules) {
    const child = root.createChildContainer();
    const short = module.name.replace(/^agent-/, '').replace(/[^a-z0-9]/g, '_');
    child.register('vectorIndex', { useFactory: instanceCachingFactory(() => sql.vectorIndex({ table: `${short}_vectors` })) });
    child.register('logger', { useValue: logger.child({ module: module.name }) });
    const moduleConfig = module.config
      ? parseConfigSection({ schema: module.config.schema, value: options.moduleConfigs?.[module.name] ?? {}, prefix: [module.config.key] })
      : undefined;
    const declared = new Set<string>();
    const deps: Record<string, unknown> = {
      moduleConfig,
      use: (ref: AnyPortRef) => {
        if (!declared.has(ref.id)) throw new Error(`Module "${module.name}" uses the port "${ref.id}" without listing it in its ports.`);
        return child.resolve(ref.id);
      },
    };
    for (const entry of module.ports) {
      const id = typeof entry === 'string' ? entry : entry.id;
      if (!child.isRegistered(id, true)) {
        const what = typeof entry === 'string' ? '' : ` (${entry.description})`;
        throw new Error(`Module "${module.name}" needs the port "${id}"${what}, which no adapter or loaded module provides.`);
      }
      declared.add(id);
      if (typeof entry === 'string') Object.defineProperty(deps, id, { enumerable: true, get: () => child.resolve(id) });
    }
    services.set(module.name, module.service(deps as never));
  }

  jobs.register(
    {
      name: 'core.jobs-prune',
      schedule: { every: 3_600_000 },
      run: async () => void (await pruneFinishedJobs({ knex: sql.knex, now: clock.now() })),
    },
    null,
  );
  jobs.register(
    {
      name: 'core.audit-sweep',
      schedule: { every: 3_600_000 },
      run: async () => {
        const days = await settings.get<number>('audit_retention_days');
        await audit.sweep({ before: clock.now() - days * 86_400_000 });
      },
    },
    null,
  );
  for (const module of modules) {
    for (const job of module.jobs ?? []) jobs.register(job, serviceOf(module.name));
  }

  const migrationSets = migrationSetsOf(modules);

  // Reading every set's migration table costs dozens of statements; a load balancer probes every few seconds.
  let migrationsOkUntil = Number.NEGATIVE_INFINITY;
  /** Set when stop() begins: /ready answers 503 so load balancers stop sending traffic here. */
  let draining = false;
  const ready = async () => {
    const checks: Record<string, string> = {};
    if (draining) checks.shutdown = 'in progress';
    try {
      await sql.ping();
      checks.database = 'ok';
      const remembered = clock.now() < migrationsOkUntil;
      for (const set of migrationSets) {
        const pending = remembered ? [] : await pendingMigrations({ knex: sql.knex, table: set.table, migrations: set.migrations });
        checks[`migrations:${set.name}`] = pending.length === 0 ? 'ok' : `${pending.length} pending`;
      }
      if (!remembered && Object.values(checks).every((check) => check === 'ok')) migrationsOkUntil = clock.now() + READY_MIGRATIONS_TTL_MS;
    } catch (error) {
      checks.database = `unreachable: ${publicReason(error)}`;
    }
    const ok = Object.values(checks).every((check) => check === 'ok');
    // Reported, not required: while a rate-limit store of its own (Redis) is down requests go on unlimited, and while
    // a disk is full reads are still answered (writes get 507).
    const optional: Record<string, string> = {};
    if (options.adapters.rateLimiter) optional.rate_limiter = await probeRateLimiter(options.adapters.rateLimiter);
    for (const disk of disks) optional[`disk:${disk.name}`] = await diskCheck(disk);
    Object.assign(checks, optional);
    return { ok, degraded: Object.values(optional).some((check) => check !== 'ok'), checks };
  };

  let openapiDocument: Record<string, unknown> | undefined;
  const openapi = () => {
    openapiDocument ??= buildOpenApiDocument({ modules, version: options.version ?? '0.1.0' });
    return openapiDocument;
  };

  const isBridgeKey = equalsSecret(config.bridgeKey);
  const httpRateLimiter = failOpenRateLimiter({
    limiter: () => root.resolve<RateLimiter>('rateLimiter'),
    clock,
    logger,
    onFailure: () => requestMetrics?.rateLimiterFailures.inc(),
  });
  const refusals = createRefusalTally({ audit, clock, logger, windowMs: config.audit.refusalWindowMs });
  const failedAuth = observedFailedAuth(
    createFailedAuthLimit({
      perMinute: config.http.failedAuthPerMinute,
      rateLimiter: () => httpRateLimiter,
      logger,
    }),
    { tally: refusals, metrics: requestMetrics },
  );
  const jsonPool = createJsonParsePool({
    onFailure: (reason) => logger.warn({ reason }, 'JSON body parse threads failed: large bodies are parsed on the event loop from now on'),
  });
  const { app, mount: mountSurface } = createHttpApp({
    modules,
    logger,
    bridgeKey: config.bridgeKey,
    bodyLimitBytes: config.http.bodyLimitBytes,
    bodyTimeoutMs: config.http.bodyTimeoutMs,
    jsonPool,
    rateLimitPerMinute: config.http.rateLimitPerMinute,
    failedAuth,
    validateResponses: config.http.validateResponses,
    mounts: options.adapters.mounts ?? [],
    rateLimiter: () => httpRateLimiter,
    verifyCredential,
    missingAgents,
    serviceOf,
    ready,
    openapi,
    observe: observeRequests({
      modules,
      base: FUNCTIONS_BASE,
      logger,
      trustProxyHops: config.http.trustProxyHops,
      metrics: requestMetrics,
      audit,
    }),
  });
  if (config.metrics.enabled && config.metrics.port === undefined) {
    mountSurface(
      guardedMetricsMount({
        registry: metrics.registry,
        bridgeKey: config.bridgeKey,
        token: config.metrics.token,
        check: (client) => failedAuth.check(client),
        refused: (client, reason) => failedAuth.fail(client, reason),
      }),
    );
  }

  let server: Server | undefined;
  let connections: ConnectionDrain | undefined;
  let metricsListener: MetricsListener | undefined;
  let started = false;
  let stopped = false;

  const kernel: Kernel = {
    app: app as unknown as Hono,
    config,
    logger,
    jobs,
    sql,
    audit,
    metrics,
    modules,
    async authenticate(credential, authOptions) {
      const client = authOptions?.client;
      if (client !== undefined) await failedAuth.check(client);
      const principal =
        credential === null ? null : isBridgeKey(credential) ? { kind: 'bridge' as const } : await verifyCredential(credential);
      if (principal === null && client !== undefined) await failedAuth.fail(client, credential === null ? 'missing' : 'unknown');
      return principal;
    },
    rateLimit: (principal, limitOptions) =>
      enforceRateLimit(
        principal,
        { rateLimitPerMinute: config.http.rateLimitPerMinute, rateLimiter: () => httpRateLimiter },
        limitOptions?.cost,
      ),
    async migrate() {
      return sql.exclusive({ key: 'agentinfra:migrations' }, async () => {
        // Every table is checked before any migration runs, so a newer schema is refused before anything changes.
        for (const set of migrationSets) await refuseNewerSchema({ knex: sql.knex, table: set.table, migrations: set.migrations });
        const results: Array<{ module: string; applied: string[] }> = [];
        for (const set of migrationSets) {
          const applied = await migrateLatest({ knex: sql.knex, table: set.table, migrations: set.migrations });
          results.push({ module: set.name, applied });
        }
        return results;
      });
    },
    async start() {
      if (started) return;
      const pending: string[] = [];
      for (const set of migrationSets) {
        for (const name of await pendingMigrations({ knex: sql.knex, table: set.table, migrations: set.migrations })) {
          pending.push(`${set.name}:${name}`);
        }
      }
      const migrateStarted = clock.now();
      if (pending.length > 0)
        logger.info({ migrations: pending }, `${pending.length} migrations pending: applying them (or waiting for the process that is)`);
      await kernel.migrate();
      if (pending.length > 0) logger.info({ ms: clock.now() - migrateStarted }, 'migrations applied');
      for (const module of modules) await module.start?.(serviceOf(module.name));
      if (config.jobs.enabled) jobs.start();
      started = true;
    },
    async listen(listenOptions) {
      if (!started) await kernel.start();
      const port = listenOptions?.port ?? config.port;
      const hostname = listenOptions?.host ?? config.host;
      if (config.metrics.enabled && config.metrics.port !== undefined && !metricsListener) {
        metricsListener = await startMetricsListener({ registry: metrics.registry, port: config.metrics.port, host: config.metrics.host });
      }
      const metricsUrl = metricsListener?.url;
      const instance = createApiServer({
        fetch: limitPipelinedRequests(app.fetch),
        hostname,
        maxConnections: config.http.maxConnections,
        // Behind reverse proxies every connection comes from a proxy: the bound is theirs to keep.
        maxConnectionsPerAddress: config.http.trustProxyHops > 0 ? 0 : config.http.maxConnectionsPerAddress,
      });
      closeQuietConnections(instance, config.http.idleTimeoutMs);
      connections = trackConnectionDrain(instance);
      server = instance;
      return new Promise((resolve, reject) => {
        instance.once('error', reject);
        instance.listen(port, hostname, () => {
          const { port: bound } = instance.address() as AddressInfo;
          const host = hostname.includes(':') ? `[${hostname}]` : hostname;
          resolve({ url: `http://${host}:${bound}`, port: bound, ...(metricsUrl ? { metricsUrl } : {}) });
        });
      });
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      draining = true;
      // No new claims from here on; running jobs get the same grace as requests, at the same time.
      const jobsStopped = jobs.stop(config.http.shutdownGraceMs);
      if (server) {
        const current = server;
        const closed = new Promise<void>((resolve) => current.close(() => resolve()));
        const force = setTimeout(() => current.closeAllConnections(), config.http.shutdownGraceMs);
        force.unref();
        connections?.drain();
        await closed;
        clearTimeout(force);
      }
      await jsonPool.close();
      await metricsListener?.close();
      await jobsStopped;
      await refusals.close();
      for (const module of [...modules].reverse()) await module.stop?.(serviceOf(module.name));
      const embedder = root.isRegistered('embedder') ? root.resolve<Embedder>('embedder') : undefined;
      await embedder?.close?.();
      await options.adapters.blobStore?.close?.();
      await root.resolve<RateLimiter>('rateLimiter').close?.();
      await root.resolve<Lock>('lock').close?.();
      await sql.close();
      await options.adapters.dispose?.();
    },
    service<S>(moduleName: string) {
      return serviceOf(moduleName) as S;
    },
    openapi,
    ready,
    describeModules() {
      return modules.flatMap((module) => {
        const phrase = module.describe?.(serviceOf(module.name));
        return phrase ? [phrase] : [];
      });
    },
  };
  for (const surface of options.surfaces ?? []) mountSurface(surface(kernel));
  return kernel;
}
