export { knexOptionSchema, lexicalSourceOptionSchema } from './adapter-options.js';
export { type AuditRow, type ChainBreak, chainHash, GENESIS_HASH } from './audit/audit-chain.js';
export {
  type AuditActor,
  type AuditActorKind,
  type AuditEvent,
  type AuditEventInput,
  type AuditOutcome,
  auditActorOf,
  auditEventSchema,
  SYSTEM_ACTOR,
} from './audit/audit-event.js';
export { type AuditListQuery, type AuditLog, createAuditLog } from './audit/audit-log.js';
export type { ChainReport } from './audit/audit-store.js';
export { authorize } from './auth/authorize.js';
export { readCredential } from './auth/credential-transport.js';
export { createPermissionRegistry, type PermissionRegistry } from './auth/permission-registry.js';
export type { AgentDirectory, CredentialVerifier, Principal, TeamDirectory } from './auth/principal.js';
export { credentialsPort, describePrincipal, teamsPort } from './auth/principal.js';
export { bindHostSchema, isBindHost } from './bind-host.js';
export { assertStorageKey, MAX_KEY_BYTES, storageKeyProblem } from './blobs/storage-key.js';
export * from './config.js';
export { type CredentialPrefix, equalsSecret, hashCredential, newCredential, newId, safeEqual } from './credentials.js';
export {
  type AddressClass,
  type AddressVerdict,
  checkTargetField,
  classifyAddress,
  createHttpDelivery,
  type HostResolver,
  type HttpDeliveryOptions,
  httpDeliveryOptionsSchema,
  newWebhookSecret,
  type ResolvedAddress,
  seesWholeTargets,
  signWebhook,
  systemResolver,
  TargetLookupFailure,
  targetWithoutQuery,
  WEBHOOK_SECRET_PREFIX,
  webhookSecretSchema,
  webhookSigningKey,
} from './delivery/index.js';
export { DependencyUnavailableError, dependencyFailure, UNAVAILABLE_RETRY_AFTER_SECONDS } from './dependency-failure.js';
export * from './errors.js';
export type {
  EnqueueOptions,
  JobDefinition,
  JobQueue,
  JobRecord,
  JobRunContext,
  JobSchedule,
  JobSelection,
  JobStatus,
} from './jobs/job.js';
export { JobInterruptedError, JobLeaseLostError } from './jobs/job.js';
export { JobRunner } from './jobs/runner.js';
export { nextOccurrence } from './jobs/schedule.js';
export { withinDeadline } from './kernel/body-deadline.js';
export { addressGroup, clientAddress } from './kernel/client-address.js';
export { errorResponse, FUNCTIONS_BASE, type HttpMount, type MountRequestInfo } from './kernel/http.js';
export { nextIoTurn } from './kernel/io-turn.js';
export { MAX_JSON_ARRAY_ELEMENTS, MAX_JSON_CONTAINERS, MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from './kernel/json-body.js';
export { type JsonShape, jsonShape } from './kernel/json-text.js';
export { createKernel, type Kernel, type KernelAdapters, type KernelOptions, type KernelSurface } from './kernel/kernel.js';
export type { Migration, MigrationSet, ModuleMigrations } from './kernel/migrations.js';
export { migrateLatest, migrationSetsOf, migrationTableOf, pendingMigrations, refuseNewerSchema } from './kernel/migrations.js';
export {
  type AnyModule,
  type AnyRoute,
  defineModule,
  type ModuleDefinition,
  type ModuleDeps,
  type PortMap,
  type PortName,
} from './kernel/module.js';
export { buildOpenApiDocument, operationIdOf } from './kernel/openapi.js';
export { MAX_PIPELINED_REQUESTS } from './kernel/pipelined-requests.js';
export { type AnyPortRef, createPortRef, type PortProvision, type PortRef, provide } from './kernel/port-ref.js';
export { fieldIssues, MAX_FIELD_ISSUES, parseRequest, unlistedIssuesNote } from './kernel/request-parse.js';
export {
  type RouteAudit,
  type RouteAuth,
  type RouteContext,
  type RouteDefinition,
  type RouteEffects,
  routesFor,
} from './kernel/route.js';
export { loadServerConfig, type ServerConfig } from './kernel/server-config.js';
export { createLogger, type LogFormat, switchLogLevelOnSignal } from './logger.js';
export type { CoreMetrics } from './observability/core-metrics.js';
export type { WatchedDisk } from './observability/disk-space.js';
export { METRICS_PATH } from './observability/metrics-endpoint.js';
export { createMetricsRegistry, DURATION_BUCKETS, type MetricOptions, type MetricsRegistry } from './observability/metrics-registry.js';
export { requestIdFrom } from './observability/request-observer.js';
export { type KeysetColumn, keysetPage, whereAfterKeyset } from './pagination/keyset.js';
export { createListCursor, type ListCursor } from './pagination/list-cursor.js';
export * from './ports/index.js';
export { assertWithinQuota } from './quota.js';
export { drainRemovalQueue, queueRemovals, type RemovalDrain } from './removal-queue.js';
export { agentIdSchema, instantSchema, permissionNameSchema, scopeEntrySchema, teamNameSchema, timestampSchema } from './schemas.js';
export { createGroupCommit, type GroupCommit, type ItemOutcome } from './services/group-commit.js';
export type { LockAcquire, MemoryLock, MemoryLockOptions } from './services/memory-lock.js';
export { createMemoryLock, lockAcquireSchema, parseLockAcquire } from './services/memory-lock.js';
export type {
  MemoryRateLimiter,
  MemoryRateLimiterOptions,
  RateLimitConsume,
  RateLimitPeek,
  RateLimitRefund,
} from './services/memory-rate-limiter.js';
export {
  createMemoryRateLimiter,
  parseRateLimitOptions,
  rateLimitConsumeSchema,
  rateLimitPeekSchema,
  rateLimitRefundSchema,
} from './services/memory-rate-limiter.js';
export { type ResealSealedColumnOptions, resealSealedColumn, UnopenedSealedValuesError } from './services/reseal-sealed-column.js';
export { createAesGcmSecretBox, newMasterKey } from './services/secret-box.js';
export { type SettingDefinition, settingsCatalog } from './settings/catalog.js';
export type { SettingsService, SettingView } from './settings/settings-service.js';
export { chunks, SQL_ID_CHUNK } from './sql-chunks.js';
export { lockedWhen } from './sql-locking.js';
export { newTimeOrderedId } from './time-ordered-id.js';
export { COMMON_TERM_TTL_MS, COMMON_TERMS_MAX, type CommonTerms, createCommonTerms } from './vectors/common-terms.js';
export { attachedRow, attachSql, insertShape, quoteIdentifier } from './vectors/companion-tables.js';
export { lexicalTerms, MAX_LEXICAL_POSTINGS, MAX_LEXICAL_TERMS, selectiveTerms } from './vectors/lexical-terms.js';
export { toUnitVector } from './vectors/unit-vector.js';
export { filterVisibilityKeys, itemVisibilityKeys } from './vectors/vector-visibility.js';
