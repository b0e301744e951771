import { hkdfSync } from 'node:crypto';
import { join } from 'node:path';
import { createSqliteDatabase } from '@agentinfra/adapter-sqlite';
import type { BlobStore, CoreConfig, Embedder, HttpMount, KernelAdapters, SqlDatabase, WatchedDisk } from '@agentinfra/core';
import type { Logger } from 'pino';
import { ensureDatabaseFile, ensureDataDir, sqliteFileIn } from './data-dir.js';

/** Adapters chosen from the configuration, with a one-line description for the start-up banner. */
export interface ConfiguredAdapters {
  adapters: KernelAdapters;
  /** Tells URL-signing adapters the address the server really listens on (when `publicUrl` is not set). */
  setListenUrl(url: string): void;
  /** e.g. `sql=sqlite (.agentinfra/agentinfra.db) limits=in-process embedder=wordvec-…`. */
  summary: string;
}

/**
 * The SQL adapter the config selects: PostgreSQL when `databaseUrl` is set,
 * else the SQLite file in `dataDir` (created 0600 in a 0700 folder when
 * missing, see {@link ensureDatabaseFile}). PostgreSQL's routine messages (`NOTICE`,
 * `INFO`, `LOG`, `DEBUG`, such as "trigger … does not exist, skipping" from
 * idempotent DDL at start-up) go to `logger` at `debug`; its `WARNING`s and
 * the adapter's own notices (such as running without pgvector) at `warn`;
 * knex's own messages (a connection error while the server is unreachable)
 * go to `logger` at their level instead of the console.
 */
export async function openDatabase(config: CoreConfig, logger?: Logger): Promise<SqlDatabase> {
  if (config.databaseUrl) {
    const { createPostgresDatabase } = await import('@agentinfra/adapter-postgres');
    return createPostgresDatabase({
      url: config.databaseUrl,
      poolMax: config.database.poolMax,
      statementTimeoutMs: config.database.statementTimeoutMs,
      schema: config.database.schema,
      ...(logger
        ? {
            onNotice: (line: string) => logPostgresNotice(logger, line),
            onClientLog: (level: 'debug' | 'warn' | 'error', message: string) => logger[level]({ component: 'knex' }, message),
          }
        : {}),
    });
  }
  const filename = sqliteFileIn(config.dataDir);
  ensureDatabaseFile(filename);
  return createSqliteDatabase({ filename });
}

/** Routine server messages at `debug`, warnings and the adapter's own notices at `warn` (see {@link openDatabase}). */
function logPostgresNotice(logger: Logger, line: string): void {
  if (/^(NOTICE|INFO|LOG|DEBUG\d?):/.test(line)) logger.debug({ component: 'postgres' }, line);
  else logger.warn({ component: 'postgres' }, line);
}

/** The embedder the config selects; the OpenAI-compatible one is verified (dimension check) before use. */
export async function openEmbedder(config: CoreConfig): Promise<Embedder> {
  if (config.embedder.provider === 'openai') {
    const { createOpenAiEmbedder } = await import('@agentinfra/adapter-openai');
    return createOpenAiEmbedder({
      baseUrl: config.embedder.baseUrl,
      model: config.embedder.model,
      apiKey: config.embedder.apiKey,
      dimensions: config.embedder.dimensions,
    });
  }
  const { createWordVectorEmbedder } = await import('@agentinfra/adapter-wordvec');
  return createWordVectorEmbedder();
}

/**
 * The blob store the config selects: S3/MinIO when `s3` is set, else a
 * folder under `dataDir` (made 0700 when missing) whose signed upload/download URLs this server
 * serves itself (HMAC key derived from the master key with HKDF-SHA256).
 */
export async function openBlobStore(
  config: CoreConfig,
  publicUrl: () => string,
): Promise<{ blobStore: BlobStore; mounts: HttpMount[]; summary: string }> {
  if (config.s3) {
    const { createS3BlobStore } = await import('@agentinfra/adapter-s3');
    const blobStore = await createS3BlobStore({
      url: config.s3.endpoint,
      bucket: config.s3.bucket,
      accessKey: config.s3.accessKey,
      secretKey: config.s3.secretKey,
      region: config.s3.region,
      pathStyle: config.s3.pathStyle,
      createBucket: config.s3.createBucket,
    });
    return { blobStore, mounts: [], summary: blobStore.describe() };
  }
  const { createFsBlobStore } = await import('@agentinfra/adapter-fs');
  ensureDataDir(config.dataDir);
  const signingKey = Buffer.from(hkdfSync('sha256', Buffer.from(config.masterKey, 'base64'), Buffer.alloc(0), 'agentinfra blob urls', 32));
  const { store, mount } = createFsBlobStore({ dir: join(config.dataDir, 'blobs'), publicUrl, signingKey });
  return { blobStore: store, mounts: [mount], summary: store.describe() };
}

/** The local folders the configured adapters write to (the SQLite file's, the fs blob store's), for /ready and /metrics. */
function localDisks(config: CoreConfig): WatchedDisk[] {
  return [
    ...(config.databaseUrl ? [] : [{ name: 'database', path: config.dataDir }]),
    ...(config.s3 ? [] : [{ name: 'blobs', path: join(config.dataDir, 'blobs') }]),
  ];
}

/**
 * Builds every adapter from the validated config: SQLite or PostgreSQL,
 * in-process or Redis limits and locks, and the embedder.
 * @throws the adapter's error when PostgreSQL, Redis or the embedding server cannot be reached.
 */
export async function openAdapters(config: CoreConfig, logger?: Logger): Promise<ConfiguredAdapters> {
  const sql = await openDatabase(config, logger);
  try {
    const embedder = await openEmbedder(config);
    let listenUrl = config.publicUrl ?? `http://${config.host}:${config.port}`;
    const blobs = await openBlobStore(config, () => listenUrl);
    const adapters: KernelAdapters = { sql, embedder, blobStore: blobs.blobStore, mounts: blobs.mounts, disks: localDisks(config) };
    let limits = 'in-process';
    if (config.redisUrl) {
      const { createRedisAdapters } = await import('@agentinfra/adapter-redis');
      const redis = await createRedisAdapters({ url: config.redisUrl, keyPrefix: config.redisKeyPrefix });
      adapters.rateLimiter = redis.rateLimiter;
      adapters.lock = redis.lock;
      adapters.dispose = () => redis.close();
      limits = redis.describe();
    }
    return {
      adapters,
      summary: `sql=${sql.describe()} blobs=${blobs.summary} limits=${limits} embedder=${embedder.id}`,
      setListenUrl: (url) => {
        if (!config.publicUrl) listenUrl = url;
      },
    };
  } catch (error) {
    await sql.close();
    throw error;
  }
}
