import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ParseError, parse as parseJsonc, printParseErrorCode } from 'jsonc-parser';
import { z } from 'zod';
import { bindHostSchema } from './bind-host.js';

const base64Key32 = z.string().refine((value) => Buffer.from(value, 'base64').length === 32, 'must be base64 of exactly 32 bytes');

/**
 * A check of a service URL (PostgreSQL, Redis) as its adapter will parse it
 * (WHATWG `URL`, then percent-decoding of user and password), so a malformed
 * one is reported as a configuration problem. The messages never repeat the
 * URL: it usually holds the password.
 * @param scheme the accepted schemes (`/^postgres(ql)?:\/\//`) and how to name them in the refusal.
 * @param shape the URL's shape, for the message (`postgres://user:password@host:port/database`).
 */
function serviceUrlCheck(scheme: { pattern: RegExp; message: string }, shape: string) {
  return (value: string, context: z.RefinementCtx): void => {
    if (!scheme.pattern.test(value)) {
      context.addIssue({ code: 'custom', message: scheme.message });
      return;
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      context.addIssue({
        code: 'custom',
        message:
          `is not a valid URL: expected ${shape} with a port of at most 65535 and ` +
          'special characters in the user and password percent-encoded (the value is not repeated here)',
      });
      return;
    }
    try {
      decodeURIComponent(url.username);
      decodeURIComponent(url.password);
    } catch {
      context.addIssue({
        code: 'custom',
        message: 'has a malformed percent-encoding in its user or password (write % as %25; the value is not repeated here)',
      });
    }
  };
}

const checkPostgresUrl = serviceUrlCheck(
  { pattern: /^postgres(ql)?:\/\//, message: 'must start with postgres://' },
  'postgres://user:password@host:port/database',
);
const checkRedisUrl = serviceUrlCheck(
  { pattern: /^rediss?:\/\//, message: 'must start with redis:// or rediss://' },
  'redis://user:password@host:port/db',
);

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
  host: bindHostSchema.default('127.0.0.1'),
  /** Base URL used in upload/download URLs; default `http://<host>:<port>`. */
  publicUrl: z.url().optional(),
  /** The bridge key (service-level credential), `bk_…`. */
  bridgeKey: z.string().min(16, 'must be at least 16 characters (agentinfra init generates one)'),
  /** Key for secrets at rest: base64 of 32 bytes. */
  masterKey: base64Key32,
  /** Earlier master keys still accepted for opening secrets during a rotation. */
  previousMasterKeys: z.array(base64Key32).default([]),
  /** `postgres://…` selects PostgreSQL; absent means SQLite in `dataDir`. */
  databaseUrl: z.string().superRefine(checkPostgresUrl).optional(),
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
  redisUrl: z.string().superRefine(checkRedisUrl).optional(),
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
      /** Milliseconds a JSON request body may take to arrive once its headers have (408 after, and the connection is closed). */
      bodyTimeoutMs: z.number().int().min(100).default(30_000),
      /**
       * Milliseconds a connection may send and receive nothing before it is
       * closed (Node's socket timeout), for every path, blob uploads included.
       */
      idleTimeoutMs: z.number().int().min(1_000).default(120_000),
      /**
       * Most connections the API's listener keeps open at once (Node's
       * `server.maxConnections`): one accepted over it is closed at once,
       * unanswered, until others close. An idle connection costs about 10 KiB
       * and a file descriptor; 0 turns the bound off.
       */
      maxConnections: z.number().int().min(0).default(10_000),
      /**
       * Most connections one client address keeps open at once (an IPv6
       * address counts by its /64), by the socket's peer address. A
       * connection over it has its first request answered 429 and is closed,
       * so one address cannot hold all of `maxConnections`; 0 turns the bound
       * off, and so does `trustProxyHops` > 0 (every connection then comes
       * from a proxy, which should bound its clients' connections itself).
       */
      maxConnectionsPerAddress: z.number().int().min(0).default(1_000),
      /** Requests per minute per device key, and per granting and receiving agent for delegation tokens (429 above); 0 turns the limit off. The bridge key is not limited. */
      rateLimitPerMinute: z.number().int().min(0).default(6_000),
      /**
       * Failed authentications per client address per minute before every
       * authentication from that address is refused with 429 for the rest of
       * the window; 0 turns the limit off. Counted through the rate-limit port,
       * so replicas sharing Redis share the count.
       */
      failedAuthPerMinute: z.number().int().min(0).default(30),
      /**
       * Reverse proxies in front of the server that append to
       * `X-Forwarded-For`; the client address is the entry that many places
       * from the right. 0 (default) uses the socket's peer address.
       */
      trustProxyHops: z.number().int().min(0).max(10).default(0),
      /** Milliseconds `serve` waits for in-flight requests on SIGTERM before closing connections. */
      shutdownGraceMs: z.number().int().min(0).default(10_000),
      /** Check every response against its schema (tests, development). */
      validateResponses: z.boolean().default(false),
    })
    .default({
      bodyLimitBytes: 1_048_576,
      bodyTimeoutMs: 30_000,
      idleTimeoutMs: 120_000,
      maxConnections: 10_000,
      maxConnectionsPerAddress: 1_000,
      rateLimitPerMinute: 6_000,
      failedAuthPerMinute: 30,
      trustProxyHops: 0,
      shutdownGraceMs: 10_000,
      validateResponses: false,
    }),
  jobs: z
    .object({
      /** How often an idle worker looks for due jobs, in milliseconds. */
      pollIntervalMs: z.number().int().min(10).default(250),
      /** Jobs one process runs at the same time. */
      concurrency: z.number().int().min(1).max(256).default(8),
      /**
       * Jobs of one fairness group (e.g. one agent's webhook deliveries) that
       * run at the same time across all processes sharing the database.
       */
      groupConcurrency: z.number().int().min(1).max(256).default(2),
      /** First retry delay ceiling in milliseconds; doubles per attempt, with equal jitter (a delay between half and all of it). */
      retryBaseMs: z.number().int().min(1).default(1_000),
      /** Longest retry delay in milliseconds. */
      retryMaxMs: z.number().int().min(1).default(3_600_000),
      /** Set to false to serve HTTP without running background jobs in this process. */
      enabled: z.boolean().default(true),
    })
    .default({ pollIntervalMs: 250, concurrency: 8, groupConcurrency: 2, retryBaseMs: 1_000, retryMaxMs: 3_600_000, enabled: true }),
  /** Lets webhooks and callbacks reach loopback/private addresses, over plain http:// too (tests, labs). */
  allowPrivateCallbacks: z.boolean().default(false),
  embedder: embedderConfigSchema.default({ provider: 'wordvec' }),
  log: z
    .object({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      /** `json` (one object per line), `pretty` (for people), or `auto`: pretty when stdout is a terminal. */
      format: z.enum(['auto', 'json', 'pretty']).default('auto'),
    })
    .default({ level: 'info', format: 'auto' }),
  /** Prometheus metrics at `GET /metrics` (see docs/operations.md "Metrics"). */
  metrics: z
    .object({
      /** Off: no `/metrics` and no per-request measurements (benchmarks, embedding apps with their own). */
      enabled: z.boolean().default(true),
      /** A bearer token the scraper sends instead of the bridge key. */
      token: z.string().min(16, 'must be at least 16 characters').optional(),
      /** Serve `/metrics` without a credential on its own listener at this port (0 = any free port) instead of on the API. */
      port: z.number().int().min(0).max(65535).optional(),
      /** Bind address of that listener. */
      host: bindHostSchema.default('127.0.0.1'),
    })
    .default({ enabled: true, host: '127.0.0.1' }),
  /** The audit log of security events (see docs/operations.md "Audit log"). */
  audit: z
    .object({
      /** Off: nothing is recorded (benchmarks only; an operator loses the trail of who did what). */
      enabled: z.boolean().default(true),
      /** Milliseconds over which refused authentications are tallied into one `auth.refused` event per client address. */
      refusalWindowMs: z.number().int().min(1_000).default(60_000),
    })
    .default({ enabled: true, refusalWindowMs: 60_000 }),
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
  { name: 'AGENTINFRA_BODY_TIMEOUT_MS', path: ['http', 'bodyTimeoutMs'], type: 'integer' },
  { name: 'AGENTINFRA_IDLE_TIMEOUT_MS', path: ['http', 'idleTimeoutMs'], type: 'integer' },
  { name: 'AGENTINFRA_MAX_CONNECTIONS', path: ['http', 'maxConnections'], type: 'integer' },
  { name: 'AGENTINFRA_MAX_CONNECTIONS_PER_ADDRESS', path: ['http', 'maxConnectionsPerAddress'], type: 'integer' },
  { name: 'AGENTINFRA_RATE_LIMIT_PER_MINUTE', path: ['http', 'rateLimitPerMinute'], type: 'integer' },
  { name: 'AGENTINFRA_FAILED_AUTH_PER_MINUTE', path: ['http', 'failedAuthPerMinute'], type: 'integer' },
  { name: 'AGENTINFRA_TRUST_PROXY_HOPS', path: ['http', 'trustProxyHops'], type: 'integer' },
  { name: 'AGENTINFRA_JOBS_ENABLED', path: ['jobs', 'enabled'], type: 'boolean' },
  { name: 'AGENTINFRA_JOBS_POLL_INTERVAL_MS', path: ['jobs', 'pollIntervalMs'], type: 'integer' },
  { name: 'AGENTINFRA_JOBS_CONCURRENCY', path: ['jobs', 'concurrency'], type: 'integer' },
  { name: 'AGENTINFRA_JOBS_GROUP_CONCURRENCY', path: ['jobs', 'groupConcurrency'], type: 'integer' },
  { name: 'AGENTINFRA_ALLOW_PRIVATE_CALLBACKS', path: ['allowPrivateCallbacks'], type: 'boolean' },
  { name: 'AGENTINFRA_EMBEDDER', path: ['embedder', 'provider'], type: 'string' },
  { name: 'AGENTINFRA_EMBEDDER_URL', path: ['embedder', 'baseUrl'], type: 'string' },
  { name: 'AGENTINFRA_EMBEDDER_MODEL', path: ['embedder', 'model'], type: 'string' },
  { name: 'AGENTINFRA_EMBEDDER_API_KEY', path: ['embedder', 'apiKey'], type: 'string' },
  { name: 'AGENTINFRA_EMBEDDER_DIMENSIONS', path: ['embedder', 'dimensions'], type: 'integer' },
  { name: 'AGENTINFRA_LOG_LEVEL', path: ['log', 'level'], type: 'string' },
  { name: 'AGENTINFRA_LOG_FORMAT', path: ['log', 'format'], type: 'string' },
  { name: 'AGENTINFRA_METRICS_ENABLED', path: ['metrics', 'enabled'], type: 'boolean' },
  { name: 'AGENTINFRA_METRICS_TOKEN', path: ['metrics', 'token'], type: 'string' },
  { name: 'AGENTINFRA_METRICS_PORT', path: ['metrics', 'port'], type: 'integer' },
  { name: 'AGENTINFRA_METRICS_HOST', path: ['metrics', 'host'], type: 'string' },
  { name: 'AGENTINFRA_AUDIT_ENABLED', path: ['audit', 'enabled'], type: 'boolean' },
];

/**
 * One invalid setting: its place in the config tree, what is wrong, and
 * where the value came from, so that the report points at the variable or
 * the file key to fix.
 */
export interface ConfigProblem {
  /** Dotted config path, e.g. `http.rateLimitPerMinute`; empty for the whole tree. */
  path: string;
  /** What is wrong (zod's message or a conversion error); never repeats a string value, which could be a secret. */
  message: string;
  /**
   * `env`: the environment variable that set the value. `file`: the config
   * file that holds it. `unset`: neither sets it; `variable` could. `given`:
   * passed in code (e.g. `createKernel`'s module configs), where `variable`
   * is the one that sets it for the server.
   */
  source:
    | { kind: 'env'; variable: string }
    | { kind: 'file'; file: string }
    | { kind: 'unset'; file: string; variable?: string }
    | { kind: 'given'; variable?: string };
}

/** Raised when the configuration is missing or invalid; the message names each bad setting with its source. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /** Every invalid setting (empty when the error is about the file itself, e.g. not valid JSON). */
  readonly problems: readonly ConfigProblem[];
  /** The config file that was consulted and whether it exists, when known. */
  readonly configFile?: { path: string; found: boolean };

  constructor(message: string, details: { problems?: readonly ConfigProblem[]; configFile?: { path: string; found: boolean } } = {}) {
    super(message);
    this.problems = details.problems ?? [];
    this.configFile = details.configFile;
  }
}

/** Where the raw configuration came from, to name the source of each problem. */
export interface ConfigSources {
  /** Absolute path of the config file (it may not exist). */
  file: string;
  fileFound: boolean;
  /** The file's parsed contents; empty without a file. */
  fileValues: Record<string, unknown>;
  /** Dotted config path → the environment variable that set it. */
  envPaths: ReadonlyMap<string, string>;
  /** The bindings that were read, to say which variable could set a missing value. */
  bindings: readonly EnvBinding[];
}

/** Converts a variable's text to its binding's type, or returns why it cannot (string values are never repeated). */
function convert(binding: EnvBinding, raw: string): { value: unknown } | { problem: string } {
  switch (binding.type) {
    case 'string':
      return { value: raw };
    case 'list':
      return {
        value: raw
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean),
      };
    case 'boolean':
      if (/^(1|true|yes|on)$/i.test(raw)) return { value: true };
      if (/^(0|false|no|off)$/i.test(raw)) return { value: false };
      return { problem: `expected 1/0 or true/false, got "${raw}"` };
    case 'integer':
    case 'number': {
      const value = Number(raw);
      if (raw.trim() === '' || Number.isNaN(value) || (binding.type === 'integer' && !Number.isInteger(value))) {
        return { problem: `expected ${binding.type === 'integer' ? 'an integer' : 'a number'}, got "${raw}"` };
      }
      return { value };
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

function hasPath(tree: unknown, path: readonly string[]): boolean {
  let node = tree;
  for (const segment of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, segment)) return false;
    node = (node as Record<string, unknown>)[segment];
  }
  return true;
}

/**
 * ` at line L, column C (what was expected)` for a text JSON.parse refused, without quoting any of it: Node's
 * message names the position of only some errors and quotes the text around the others (a config file holds
 * the keys). The position and the reason (`comma expected`) are jsonc-parser's, in strict JSON mode (no comments,
 * no trailing commas); a string with a bad escape is placed at its opening quote.
 */
function describeJsonSyntaxError(text: string): string {
  const errors: ParseError[] = [];
  parseJsonc(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (!first) return '';
  const before = text.slice(0, first.offset).split('\n');
  const reason = printParseErrorCode(first.error)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return ` at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1} (${reason})`;
}

/**
 * Reads the raw (unvalidated) configuration like {@link readRawConfig}, but
 * returns the variables that cannot be converted as problems (leaving them
 * out of `raw`) instead of throwing, together with where each value came
 * from, so that one report can list every bad setting.
 * @throws ConfigError when the file is not valid JSON or not an object.
 */
export function readConfigSources(options: { file?: string; env?: NodeJS.ProcessEnv; bindings?: readonly EnvBinding[] }): {
  raw: Record<string, unknown>;
  sources: ConfigSources;
  problems: ConfigProblem[];
} {
  const env = options.env ?? process.env;
  const bindings = options.bindings ?? coreEnvBindings;
  const file = resolve(options.file ?? env.AGENTINFRA_CONFIG ?? './agentinfra.config.json');
  let fileValues: Record<string, unknown> = {};
  const fileFound = existsSync(file);
  if (fileFound) {
    const configFile = { path: file, found: true };
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new ConfigError(`${file}: cannot be read${typeof code === 'string' ? ` (${code})` : ''}.`, { configFile });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // JSON.parse's message quotes the text around the error, and a config file holds the keys: say where, never what.
      throw new ConfigError(`${file}: not valid JSON${describeJsonSyntaxError(text)}.`, { configFile });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError(`${file}: the top level must be a JSON object.`, { configFile });
    }
    fileValues = parsed as Record<string, unknown>;
  }
  const raw = structuredClone(fileValues);
  const envPaths = new Map<string, string>();
  const problems: ConfigProblem[] = [];
  for (const binding of bindings) {
    const text = env[binding.name];
    if (text === undefined || text === '') continue;
    const converted = convert(binding, text);
    const path = binding.path.join('.');
    if ('problem' in converted) {
      problems.push({ path, message: converted.problem, source: { kind: 'env', variable: binding.name } });
      continue;
    }
    setPath(raw, binding.path, converted.value);
    envPaths.set(path, binding.name);
  }
  return { raw, sources: { file, fileFound, fileValues, envPaths, bindings }, problems };
}

/**
 * Reads the raw (unvalidated) configuration: the JSON file if it exists, then
 * every bound environment variable that is set (the environment wins).
 * @param options.file path of the config file; `AGENTINFRA_CONFIG` or `./agentinfra.config.json` by default.
 * @throws ConfigError when the file is not valid JSON, or naming every variable that cannot be converted.
 */
export function readRawConfig(options: { file?: string; env?: NodeJS.ProcessEnv; bindings?: readonly EnvBinding[] }): {
  raw: Record<string, unknown>;
  file: string;
  fileFound: boolean;
} {
  const { raw, sources, problems } = readConfigSources(options);
  if (problems.length > 0) throw configErrorFor(problems, sources);
  return { raw, file: sources.file, fileFound: sources.fileFound };
}

/** Where the value at `path` came from: the variable that set it (or a parent), else the file, else nowhere. */
function sourceOf(path: readonly string[], sources: ConfigSources | undefined, bindings: readonly EnvBinding[]): ConfigProblem['source'] {
  const variable = bindings.find((binding) => binding.path.join('.') === path.join('.'))?.name;
  if (!sources) return { kind: 'given', variable };
  for (let length = path.length; length > 0; length -= 1) {
    const setBy = sources.envPaths.get(path.slice(0, length).join('.'));
    if (setBy) return { kind: 'env', variable: setBy };
  }
  if (sources.fileFound && hasPath(sources.fileValues, path)) return { kind: 'file', file: sources.file };
  return { kind: 'unset', file: sources.file, variable };
}

/**
 * Validates one section of the configuration and returns its value or the
 * problems found (every zod issue, each with its source).
 */
export function checkConfigSection<S extends z.ZodType>(options: {
  schema: S;
  value: unknown;
  prefix?: readonly string[];
  bindings?: readonly EnvBinding[];
  sources?: ConfigSources;
}): { ok: true; data: z.output<S> } | { ok: false; problems: ConfigProblem[] } {
  const result = options.schema.safeParse(options.value);
  if (result.success) return { ok: true, data: result.data };
  const bindings = options.bindings ?? options.sources?.bindings ?? [];
  const problems = result.error.issues.map((issue): ConfigProblem => {
    const path = [...(options.prefix ?? []), ...issue.path.map(String)];
    return { path: path.join('.'), message: issue.message, source: sourceOf(path, options.sources, bindings) };
  });
  return { ok: false, problems };
}

/** One line of a configuration report, e.g. `port from AGENTINFRA_PORT: Too big: expected number to be <=65535`. */
export function describeConfigProblem(problem: ConfigProblem): string {
  const path = problem.path || '(root)';
  switch (problem.source.kind) {
    case 'env':
      return `${path} from ${problem.source.variable}: ${problem.message}`;
    case 'file':
      return `${path} in ${problem.source.file}: ${problem.message}`;
    case 'unset': {
      const where = [problem.source.file, problem.source.variable].filter(Boolean).join(' or ');
      return `${path} not set (set it in ${where}): ${problem.message}`;
    }
    case 'given':
      return `${path}: ${problem.message}${problem.source.variable ? ` (or set ${problem.source.variable})` : ''}`;
  }
}

/** One {@link ConfigError} listing every problem, each with its source. */
export function configErrorFor(problems: readonly ConfigProblem[], sources?: ConfigSources): ConfigError {
  const lines = problems.map((problem) => `  - ${describeConfigProblem(problem)}`);
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  return new ConfigError(`Invalid configuration (${count}):\n${lines.join('\n')}`, {
    problems,
    configFile: sources ? { path: sources.file, found: sources.fileFound } : undefined,
  });
}

/**
 * Validates one section of the configuration.
 * @throws ConfigError listing every invalid setting with its source (variable, file key, or not set).
 */
export function parseConfigSection<S extends z.ZodType>(options: {
  schema: S;
  value: unknown;
  prefix?: readonly string[];
  bindings?: readonly EnvBinding[];
  sources?: ConfigSources;
}): z.output<S> {
  const checked = checkConfigSection(options);
  if (checked.ok) return checked.data;
  throw configErrorFor(checked.problems, options.sources);
}
