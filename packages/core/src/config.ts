import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';

const base64Key32 = z.string().refine((value) => Buffer.from(value, 'base64').length === 32, 'must be base64 of exactly 32 bytes');

/** Which embedder the server uses for semantic memories. */
export const embedderConfigSchema = z.discriminatedUnion('provider', [
  z.object({
    /** The built-in local word-vector embedder (no network, no download at run time). */
    provider: z.literal('wordvec'),
  }),
  z.object({
    /** An OpenAI-compatible `/v1/embeddings` server (OpenAI, Ollama, vLLM, text-embeddings-inference). */
    provider: z.literal('openai'),
    /** Base URL without `/v1`, e.g. `https://api.openai.com` or `http://127.0.0.1:11434`. */
    baseUrl: z.url(),
    model: z.string().min(1),
    /** API key; prefer the environment variable `AGENTINFRA_EMBEDDER_API_KEY`. */
    apiKey: z.string().optional(),
    /** Expected vector length; checked against the server at start. */
    dimensions: z.number().int().positive().optional(),
  }),
]);

/**
 * The whole configuration tree of the server (`agentinfra.config.json`,
 * overridden by `AGENTINFRA_*` environment variables). Validated before any
 * module starts. Module sections (`artifacts`, `mesh`, …) are validated by
 * each module's own schema.
 */
export const coreConfigSchema = z.object({
  /** Folder holding the SQLite file and local blobs. */
  dataDir: z.string().min(1).default('./.agentinfra'),
  /** HTTP port; 0 picks any free port (the chosen URL is printed). */
  port: z.number().int().min(0).max(65535).default(8787),
  /** Bind address. */
  host: z.string().min(1).default('127.0.0.1'),
  /** Base URL used in upload/download URLs; default `http://<host>:<port>`. */
  publicUrl: z.url().optional(),
  /** The bridge key (service-level credential), `bk_…`. */
  bridgeKey: z.string().min(16, 'must be at least 16 characters (agentinfra init generates one)'),
  /** Key for secrets at rest: base64 of 32 bytes. */
  masterKey: base64Key32,
  /** Earlier master keys still accepted for opening secrets during a rotation. */
  previousMasterKeys: z.array(base64Key32).default([]),
  /** `postgres://…` selects PostgreSQL; absent means SQLite in `dataDir`. */
  databaseUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must start with postgres://')
    .optional(),
  database: z
    .object({
      /**
       * PostgreSQL pool size per process; at least 2, because `migrate`
       * holds one connection for the advisory lock that serializes replicas
       * while the migrations run on another.
       */
      poolMax: z
        .number()
        .int()
        .min(2, 'must be at least 2: migrations hold one connection for their lock and run on another')
        .max(200)
        .default(10),
      /** PostgreSQL `statement_timeout` in milliseconds. */
      statementTimeoutMs: z.number().int().min(100).default(30_000),
      /** PostgreSQL schema holding agentinfra's tables (created when missing); default the connection's search_path. */
      schema: z
        .string()
        .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier')
        .optional(),
    })
    .default({ poolMax: 10, statementTimeoutMs: 30_000 }),
  /** `redis://…` selects Redis for rate limits and locks; absent means in-process. */
  redisUrl: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .optional(),
  /** Prefix of every Redis key, so several deployments can share one Redis. */
  redisKeyPrefix: z.string().min(1).max(64).default('agentinfra:'),
  /** S3 or MinIO for blobs; absent means a local folder under `dataDir` served by this server's signed URLs. */
  s3: z
    .object({
      /** Endpoint URL, e.g. `http://minio:9000` or `https://s3.eu-west-1.amazonaws.com`. */
      endpoint: z.url(),
      bucket: z.string().min(3).max(63),
      accessKey: z.string().min(1),
      secretKey: z.string().min(1),
      region: z.string().min(1).default('us-east-1'),
      /** Path-style URLs (`host/bucket/key`, MinIO) instead of virtual-hosted (`bucket.host/key`). */
      pathStyle: z.boolean().default(true),
      /** Create the bucket at start when it is missing. */
      createBucket: z.boolean().default(false),
    })
    .optional(),
  http: z
    .object({
      /** Largest JSON request body in bytes (413 above). */
      bodyLimitBytes: z.number().int().min(1024).default(1_048_576),
      /** Requests per minute per credential (429 above); 0 turns the limit off. The bridge key is not limited. */
      rateLimitPerMinute: z.number().int().min(0).default(6_000),
      /** Milliseconds `serve` waits for in-flight requests on SIGTERM before closing connections. */
      shutdownGraceMs: z.number().int().min(0).default(10_000),
      /** Check every response against its schema (tests, development). */
      validateResponses: z.boolean().default(false),
    })
    .default({ bodyLimitBytes: 1_048_576, rateLimitPerMinute: 6_000, shutdownGraceMs: 10_000, validateResponses: false }),
  jobs: z
    .object({
      /** How often an idle worker looks for due jobs, in milliseconds. */
      pollIntervalMs: z.number().int().min(10).default(250),
      /** Jobs one process runs at the same time. */
      concurrency: z.number().int().min(1).max(256).default(8),
      /** First retry delay in milliseconds; doubles per attempt, with full jitter. */
      retryBaseMs: z.number().int().min(1).default(1_000),
      /** Longest retry delay in milliseconds. */
      retryMaxMs: z.number().int().min(1).default(3_600_000),
      /** Set to false to serve HTTP without running background jobs in this process. */
      enabled: z.boolean().default(true),
    })
    .default({ pollIntervalMs: 250, concurrency: 8, retryBaseMs: 1_000, retryMaxMs: 3_600_000, enabled: true }),
  /** Lets webhooks and callbacks reach loopback/private addresses, over plain http:// too (tests, labs). */
  allowPrivateCallbacks: z.boolean().default(false),
  embedder: embedderConfigSchema.default({ provider: 'wordvec' }),
  log: z
    .object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') })
    .default({ level: 'info' }),
});

/** The validated core configuration. */
export type CoreConfig = z.output<typeof coreConfigSchema>;
/** The configuration as written by users (defaults optional). */
export type CoreConfigInput = z.input<typeof coreConfigSchema>;

/** How one environment variable maps onto the config tree. */
export interface EnvBinding {
  /** Variable name, e.g. `AGENTINFRA_PORT`. */
  name: string;
  /** Path in the config tree, e.g. `['http', 'bodyLimitBytes']`. */
  path: readonly string[];
  /** How the string is converted. */
  type: 'string' | 'integer' | 'number' | 'boolean' | 'list';
}

/** Environment variables of the core config (CONTRACT.md "Running it"). Modules add their own. */
export const coreEnvBindings: readonly EnvBinding[] = [
  { name: 'AGENTINFRA_DATA_DIR', path: ['dataDir'], type: 'string' },
  { name: 'AGENTINFRA_PORT', path: ['port'], type: 'integer' },
  { name: 'AGENTINFRA_HOST', path: ['host'], type: 'string' },
  { name: 'AGENTINFRA_PUBLIC_URL', path: ['publicUrl'], type: 'string' },
  { name: 'AGENTINFRA_BRIDGE_KEY', path: ['bridgeKey'], type: 'string' },
  { name: 'AGENTINFRA_MASTER_KEY', path: ['masterKey'], type: 'string' },
  { name: 'AGENTINFRA_PREVIOUS_MASTER_KEYS', path: ['previousMasterKeys'], type: 'list' },
  { name: 'AGENTINFRA_DATABASE_URL', path: ['databaseUrl'], type: 'string' },
  { name: 'AGENTINFRA_DATABASE_POOL_MAX', path: ['database', 'poolMax'], type: 'integer' },
  { name: 'AGENTINFRA_DATABASE_SCHEMA', path: ['database', 'schema'], type: 'string' },
  { name: 'AGENTINFRA_REDIS_URL', path: ['redisUrl'], type: 'string' },
  { name: 'AGENTINFRA_REDIS_KEY_PREFIX', path: ['redisKeyPrefix'], type: 'string' },
  { name: 'AGENTINFRA_S3_ENDPOINT', path: ['s3', 'endpoint'], type: 'string' },
  { name: 'AGENTINFRA_S3_BUCKET', path: ['s3', 'bucket'], type: 'string' },
  { name: 'AGENTINFRA_S3_ACCESS_KEY', path: ['s3', 'accessKey'], type: 'string' },
  { name: 'AGENTINFRA_S3_SECRET_KEY', path: ['s3', 'secretKey'], type: 'string' },
  { name: 'AGENTINFRA_S3_REGION', path: ['s3', 'region'], type: 'string' },
  { name: 'AGENTINFRA_S3_PATH_STYLE', path: ['s3', 'pathStyle'], type: 'boolean' },
  { name: 'AGENTINFRA_S3_CREATE_BUCKET', path: ['s3', 'createBucket'], type: 'boolean' },
  { name: 'AGENTINFRA_BODY_LIMIT_BYTES', path: ['http', 'bodyLimitBytes'], type: 'integer' },
  { name: 'AGENTINFRA_RATE_LIMIT_PER_MINUTE', path: ['http', 'rateLimitPerMinute'], type: 'integer' },
  { name: 'AGENTINFRA_JOBS_ENABLED', path: ['jobs', 'enabled'], type: 'boolean' },
  { name: 'AGENTINFRA_JOBS_POLL_INTERVAL_MS', path: ['jobs', 'pollIntervalMs'], type: 'integer' },
  { name: 'AGENTINFRA_JOBS_CONCURRENCY', path: ['jobs', 'concurrency'], type: 'integer' },
  { name: 'AGENTINFRA_ALLOW_PRIVATE_CALLBACKS', path: ['allowPrivateCallbacks'], type: 'boolean' },
  { name: 'AGENTINFRA_EMBEDDER', path: ['embedder', 'provider'], type: 'string' },
  { name: 'AGENTINFRA_EMBEDDER_URL', path: ['embedder', 'baseUrl'], type: 'string' },
  { name: 'AGENTINFRA_EMBEDDER_MODEL', path: ['embedder', 'model'], type: 'string' },
  { name: 'AGENTINFRA_EMBEDDER_API_KEY', path: ['embedder', 'apiKey'], type: 'string' },
  { name: 'AGENTINFRA_EMBEDDER_DIMENSIONS', path: ['embedder', 'dimensions'], type: 'integer' },
  { name: 'AGENTINFRA_LOG_LEVEL', path: ['log', 'level'], type: 'string' },
];

/** Raised when the configuration is missing or invalid; the message names each config path and variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

function convert(binding: EnvBinding, raw: string): unknown {
  switch (binding.type) {
    case 'string':
      return raw;
    case 'list':
      return raw
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
    case 'boolean':
      if (/^(1|true|yes|on)$/i.test(raw)) return true;
      if (/^(0|false|no|off)$/i.test(raw)) return false;
      throw new ConfigError(`${binding.name}: expected 1/0 or true/false, got "${raw}".`);
    case 'integer':
    case 'number': {
      const value = Number(raw);
      if (raw.trim() === '' || Number.isNaN(value) || (binding.type === 'integer' && !Number.isInteger(value))) {
        throw new ConfigError(`${binding.name}: expected ${binding.type === 'integer' ? 'an integer' : 'a number'}, got "${raw}".`);
      }
      return value;
    }
  }
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const segment of path.slice(0, -1)) {
    const next = node[segment];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[segment] = {};
    node = node[segment] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

/**
 * Reads the raw (unvalidated) configuration: the JSON file if it exists, then
 * every bound environment variable that is set (the environment wins).
 * @param options.file path of the config file; `AGENTINFRA_CONFIG` or `./agentinfra.config.json` by default.
 * @throws ConfigError when the file is not valid JSON or a variable cannot be converted.
 */
export function readRawConfig(options: { file?: string; env?: NodeJS.ProcessEnv; bindings?: readonly EnvBinding[] }): {
  raw: Record<string, unknown>;
  file: string;
  fileFound: boolean;
} {
  const env = options.env ?? process.env;
  const file = resolve(options.file ?? env.AGENTINFRA_CONFIG ?? './agentinfra.config.json');
  let raw: Record<string, unknown> = {};
  const fileFound = existsSync(file);
  if (fileFound) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new ConfigError(`${file}: the top level must be a JSON object.`);
      }
      raw = parsed as Record<string, unknown>;
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(`${file}: not valid JSON (${(error as Error).message}).`);
    }
  }
  for (const binding of options.bindings ?? coreEnvBindings) {
    const value = env[binding.name];
    if (value !== undefined && value !== '') setPath(raw, binding.path, convert(binding, value));
  }
  return { raw, file, fileFound };
}

/**
 * Validates one section of the configuration and turns zod issues into one
 * readable {@link ConfigError} naming the config paths and their variables.
 */
export function parseConfigSection<S extends z.ZodType>(options: {
  schema: S;
  value: unknown;
  prefix?: readonly string[];
  bindings?: readonly EnvBinding[];
  source?: string;
}): z.output<S> {
  const result = options.schema.safeParse(options.value);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const path = [...(options.prefix ?? []), ...issue.path.map(String)];
    const variable = options.bindings?.find((binding) => binding.path.join('.') === path.join('.'));
    return `  - ${path.join('.') || '(root)'}: ${issue.message}${variable ? ` (or set ${variable.name})` : ''}`;
  });
  throw new ConfigError(`Invalid configuration${options.source ? ` in ${options.source}` : ''}:\n${lines.join('\n')}`);
}
