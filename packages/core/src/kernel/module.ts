import type { Logger } from 'pino';
import type { z } from 'zod';
import type { AuditLog } from '../audit/audit-log.js';
import type { PermissionRegistry } from '../auth/permission-registry.js';
import type { AgentDirectory, CredentialVerifier, TeamDirectory } from '../auth/principal.js';
import type { CoreConfig, EnvBinding } from '../config.js';
import type { JobDefinition, JobQueue } from '../jobs/job.js';
import type { MetricsRegistry } from '../observability/metrics-registry.js';
import type { BlobStore } from '../ports/blob-store.js';
import type { Clock } from '../ports/clock.js';
import type { Embedder } from '../ports/embedder.js';
import type { HttpDelivery } from '../ports/http-delivery.js';
import type { Lock } from '../ports/lock.js';
import type { RateLimiter } from '../ports/rate-limiter.js';
import type { SecretBox } from '../ports/secret-box.js';
import type { SqlDatabase } from '../ports/sql-database.js';
import type { VectorIndex } from '../ports/vector-index.js';
import type { SettingsService } from '../settings/settings-service.js';
import type { ModuleMigrations } from './migrations.js';
import type { AnyPortRef, PortProvision, PortRef } from './port-ref.js';
import type { RouteDefinition } from './route.js';

/**
 * Every port and core service a module can ask for by name, with its type.
 * `vectorIndex` is per module (tables prefixed with the module's name);
 * `teams` and `credentials` are provided by a module (identity) through
 * {@link teamsPort} and {@link credentialsPort}; the kernel builds `agents`
 * on `credentials`.
 */
export interface PortMap {
  sql: SqlDatabase;
  vectorIndex: VectorIndex;
  embedder: Embedder;
  clock: Clock;
  secretBox: SecretBox;
  rateLimiter: RateLimiter;
  lock: Lock;
  jobs: JobQueue;
  settings: SettingsService;
  /** Every permission the loaded modules declare (what a delegation may carry). */
  permissions: PermissionRegistry;
  teams: TeamDirectory;
  credentials: CredentialVerifier;
  /** Which agent ids are registered (every id when no module provides credentials). */
  agents: AgentDirectory;
  logger: Logger;
  config: CoreConfig;
  blobStore: BlobStore;
  delivery: HttpDelivery;
  /** The audit log of security events (`record` what the route declarations do not cover). */
  audit: AuditLog;
  /** The kernel's Prometheus registry; modules add their own series. */
  metrics: MetricsRegistry;
}

/** Name of a port in {@link PortMap}. */
export type PortName = keyof PortMap;

/**
 * The resolved ports a module declared, plus its own validated config
 * section. Core ports are properties by name; ports other modules provide
 * are read with `use(ref)`.
 */
export type ModuleDeps<P extends PortName, C> = Pick<PortMap, P> & {
  moduleConfig: C;
  /**
   * The port behind `ref`, which the module must list in `ports`.
   * @throws Error when `ref` is not among the module's declared ports.
   */
  use<T>(ref: PortRef<T>): T;
};

/**
 * A module: one value that declares everything the kernel needs
 * (Backstage's createBackendPlugin, Fastify plugins).
 */
export interface ModuleDefinition<P extends PortName = PortName, S = unknown, C = unknown> {
  /** SPEC.md module name, e.g. `agent-memory`; routes mount at `/functions/v1/<name>`. */
  name: string;
  /** What the module is for, in a sentence or two: the OpenAPI tag description and the docs page's section intro. */
  description?: string;
  /**
   * Ports the kernel must resolve for this module: core ports by name
   * (`'sql'`), ports of other modules by reference (`greeterPort`). A
   * missing one stops the kernel before it starts.
   */
  ports: readonly (P | AnyPortRef)[];
  /** The module's own knex migrations (own migrations table). */
  migrations: ModuleMigrations;
  /**
   * Permission names (`<area>.<action>`) this module's routes check; the
   * kernel collects them into the {@link PermissionRegistry} that
   * delegations are validated against.
   */
  permissions: readonly string[];
  /** The module's config section (key `configKey`) schema; the kernel validates it before start. */
  config?: { key: string; schema: z.ZodType<C>; env?: readonly EnvBinding[] };
  /** Builds the module's HTTP-free service layer from its ports. */
  service: (deps: ModuleDeps<P, C>) => S;
  routes: readonly AnyRoute<S>[];
  jobs?: readonly JobDefinition<S>[];
  /** Ports this module provides to the kernel and other modules, built from its service: `[provide(ref, (service) => …)]`. */
  provides?: readonly PortProvision<S>[];
  /** Called after migrations and before the server listens (start-up checks). */
  start?: (service: S) => Promise<void>;
  /** One short phrase for the start-up banner once started (e.g. `smtp on 127.0.0.1:2525`), or nothing. */
  describe?: (service: S) => string | undefined;
  /** Called on shutdown after HTTP and jobs stopped. */
  stop?: (service: S) => Promise<void>;
}

/** A route of any request and response type, as a module lists them. */
// biome-ignore lint/suspicious/noExplicitAny: routes of different body types share one list
export type AnyRoute<S> = RouteDefinition<any, any, S>;

/** A module of any shape, as the kernel stores it. */
// biome-ignore lint/suspicious/noExplicitAny: the kernel handles modules of every service type
export type AnyModule = ModuleDefinition<any, any, any>;

/**
 * Declares a module. Types flow from `ports` to the service factory's deps
 * and from the service to route handlers and jobs.
 */
export function defineModule<P extends PortName, S, C = undefined>(definition: ModuleDefinition<P, S, C>): ModuleDefinition<P, S, C> {
  return definition;
}
