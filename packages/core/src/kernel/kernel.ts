import 'reflect-metadata';
import { type ServerType, serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { type DependencyContainer, container as globalContainer, instanceCachingFactory } from 'tsyringe';
import type { CredentialVerifier, Principal } from '../auth/principal.js';
import { type CoreConfig, parseConfigSection } from '../config.js';
import { createHttpDelivery } from '../delivery/index.js';
import { coreMigrations } from '../jobs/migrations.js';
import { JobRunner, pruneFinishedJobs } from '../jobs/runner.js';
import { createLogger } from '../logger.js';
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
import { createHttpApp, type HttpMount } from './http.js';
import { migrateLatest, migrationTableOf, pendingMigrations } from './migrations.js';
import type { AnyModule, PortMap, PortName, ProvidablePort } from './module.js';
import { buildOpenApiDocument } from './openapi.js';

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
}

/** A running or runnable server instance. */
export interface Kernel {
  readonly app: Hono;
  readonly config: CoreConfig;
  readonly logger: Logger;
  readonly jobs: JobRunner;
  readonly sql: SqlDatabase;
  /** Applies core and module migrations. @returns what was applied per module. */
  migrate(): Promise<Array<{ module: string; applied: string[] }>>;
  /** Migrates, runs module start hooks (start-up checks) and starts the job runner. */
  start(): Promise<void>;
  /**
   * Starts the HTTP server (after {@link Kernel.start}).
   * @returns the URL with the real port (also when `port` is 0).
   */
  listen(options?: { port?: number; host?: string }): Promise<{ url: string; port: number }>;
  /** Graceful stop: stop accepting, finish in-flight requests and jobs, run module stop hooks, close adapters. */
  stop(): Promise<void>;
  /** The service of a loaded module. @throws Error when no such module is loaded. */
  service<S>(moduleName: string): S;
  /** The OpenAPI 3.1 document. */
  openapi(): Record<string, unknown>;
  /** What started modules report for the banner (listeners, modes), in module order. */
  describeModules(): string[];
  /** Readiness: database reachable and every migration applied. */
  ready(): Promise<{ ok: boolean; checks: Record<string, string> }>;
}

const CORE = { name: 'core', migrations: coreMigrations, table: 'core_migrations' };

/**
 * Builds a kernel: registers adapters in a tsyringe container of its own
 * (never the global one), a child container per module with its ports,
 * the ports modules provide to each other, the job runner with every
 * module's jobs, and the HTTP app with every module's routes.
 * @throws Error when a module needs a port nobody provides, or two modules share a name.
 */
export function createKernel(options: KernelOptions): Kernel {
  const { config, modules } = options;
  const logger = options.logger ?? createLogger({ level: config.log.level });
  const clock = options.adapters.clock ?? systemClock;
  const sql = options.adapters.sql;
  const root: DependencyContainer = globalContainer.createChildContainer();
  const services = new Map<string, unknown>();
  const names = new Set<string>();
  for (const module of modules) {
    if (names.has(module.name)) throw new Error(`Module "${module.name}" is loaded twice.`);
    names.add(module.name);
  }

  const jobs = new JobRunner({
    sql,
    clock,
    logger: logger.child({ component: 'jobs' }),
    pollIntervalMs: config.jobs.pollIntervalMs,
    concurrency: config.jobs.concurrency,
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
  value('settings', createSettingsService({ knex: sql.knex, clock }));
  if (options.adapters.embedder) value('embedder', options.adapters.embedder);
  if (options.adapters.blobStore) value('blobStore', options.adapters.blobStore);
  value('delivery', options.adapters.delivery ?? createHttpDelivery({ allowPrivate: config.allowPrivateCallbacks, clock }));

  const serviceOf = (moduleName: string): unknown => {
    if (!services.has(moduleName)) throw new Error(`Module "${moduleName}" is not loaded.`);
    return services.get(moduleName);
  };

  for (const module of modules) {
    for (const [port, factory] of Object.entries(module.provides ?? {}) as Array<[ProvidablePort, (service: unknown) => unknown]>) {
      if (root.isRegistered(port)) throw new Error(`Port "${port}" is provided by two modules.`);
      root.register(port, { useFactory: instanceCachingFactory(() => factory(serviceOf(module.name))) });
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
    const deps: Record<string, unknown> = { moduleConfig };
    for (const port of module.ports as readonly PortName[]) {
      if (!child.isRegistered(port, true)) {
        throw new Error(`Module "${module.name}" needs the port "${port}", which no adapter or loaded module provides.`);
      }
      Object.defineProperty(deps, port, { enumerable: true, get: () => child.resolve(port) });
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
  for (const module of modules) {
    for (const job of module.jobs ?? []) jobs.register(job, serviceOf(module.name));
  }

  let verifier: CredentialVerifier | null | undefined;
  const verifyCredential = async (credential: string): Promise<Principal | null> => {
    verifier ??= root.isRegistered('credentials') ? root.resolve<CredentialVerifier>('credentials') : null;
    return verifier === null ? null : verifier.verify({ credential });
  };

  const migrationSets = [CORE, ...modules.map((m) => ({ name: m.name, migrations: m.migrations, table: migrationTableOf(m.name) }))];

  const ready = async () => {
    const checks: Record<string, string> = {};
    try {
      await sql.ping();
      checks.database = 'ok';
      for (const set of migrationSets) {
        const pending = await pendingMigrations({ knex: sql.knex, table: set.table, migrations: set.migrations });
        checks[`migrations:${set.name}`] = pending.length === 0 ? 'ok' : `${pending.length} pending`;
      }
    } catch (error) {
      checks.database = `unreachable: ${(error as Error).message.split('\n')[0]}`;
    }
    return { ok: Object.values(checks).every((check) => check === 'ok'), checks };
  };

  let openapiDocument: Record<string, unknown> | undefined;
  const openapi = () => {
    openapiDocument ??= buildOpenApiDocument({ modules, version: options.version ?? '0.1.0' });
    return openapiDocument;
  };

  const app = createHttpApp({
    modules,
    logger,
    bridgeKey: config.bridgeKey,
    bodyLimitBytes: config.http.bodyLimitBytes,
    rateLimitPerMinute: config.http.rateLimitPerMinute,
    validateResponses: config.http.validateResponses,
    mounts: options.adapters.mounts ?? [],
    rateLimiter: () => root.resolve<RateLimiter>('rateLimiter'),
    verifyCredential,
    serviceOf,
    ready,
    openapi,
  });

  let server: ServerType | undefined;
  let started = false;
  let stopped = false;

  const kernel: Kernel = {
    app: app as unknown as Hono,
    config,
    logger,
    jobs,
    sql,
    async migrate() {
      return sql.exclusive({ key: 'agentinfra:migrations' }, async () => {
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
      await kernel.migrate();
      for (const module of modules) await module.start?.(serviceOf(module.name));
      if (config.jobs.enabled) jobs.start();
      started = true;
    },
    async listen(listenOptions) {
      if (!started) await kernel.start();
      const port = listenOptions?.port ?? config.port;
      const hostname = listenOptions?.host ?? config.host;
      return new Promise((resolve, reject) => {
        // Blob uploads to a mount may take longer than Node's default 300 s request timeout.
        const serverOptions = { requestTimeout: 0, headersTimeout: 60_000 };
        const instance = serve({ fetch: app.fetch, port, hostname, serverOptions }, (info) => {
          const host = hostname.includes(':') ? `[${hostname}]` : hostname;
          resolve({ url: `http://${host}:${info.port}`, port: info.port });
        });
        instance.once('error', reject);
        server = instance;
      });
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (server) {
        const current = server;
        const closed = new Promise<void>((resolve) => current.close(() => resolve()));
        const force = setTimeout(() => {
          (current as { closeAllConnections?: () => void }).closeAllConnections?.();
        }, config.http.shutdownGraceMs);
        force.unref();
        (current as { closeIdleConnections?: () => void }).closeIdleConnections?.();
        await closed;
        clearTimeout(force);
      }
      await jobs.stop(config.http.shutdownGraceMs);
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
  return kernel;
}
