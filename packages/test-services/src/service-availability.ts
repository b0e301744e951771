import { type ProbeResult, probePgvector, probePostgres, probeRedis } from './service-probes.js';
import { redactUrl, servicesRequired, testDatabaseUrl, testRedisUrl } from './service-urls.js';
import { printOncePerRun } from './skip-notice.js';

/** The gating decision for suites that need a server. */
export interface ServiceAvailability {
  /** `true`: run the suites. `false`: leave them out; the one skip line has been printed. */
  available: boolean;
  /** The URL that was probed, password replaced by `***`. */
  url: string;
  /** Why the server could not be reached (e.g. `ECONNREFUSED`); absent when available. */
  reason?: string;
}

/** A server (or a server feature) the test suites may need. */
interface ServiceSpec {
  key: 'postgres' | 'redis' | 'pgvector';
  label: string;
  url: string;
  probe(url: string): Promise<ProbeResult>;
  /** What is wrong, from the redacted URL and the probe's reason. */
  problem(url: string, reason: string): string;
  /** What to do about it. */
  remedy: string;
}

const cannotConnect = (url: string, reason: string) => `cannot connect to ${url} (${reason})`;

const postgres: ServiceSpec = {
  key: 'postgres',
  label: 'PostgreSQL',
  url: testDatabaseUrl(),
  probe: probePostgres,
  problem: cannotConnect,
  remedy: 'start it or set AGENTINFRA_TEST_DATABASE_URL',
};
const redis: ServiceSpec = {
  key: 'redis',
  label: 'Redis',
  url: testRedisUrl(),
  probe: probeRedis,
  problem: cannotConnect,
  remedy: 'start it or set AGENTINFRA_TEST_REDIS_URL',
};
const pgvector: ServiceSpec = {
  key: 'pgvector',
  label: 'pgvector',
  url: testDatabaseUrl(),
  probe: probePgvector,
  problem: (url, reason) => `${url}: ${reason}`,
  remedy: 'install pgvector on that server (.ci/install-pgvector.sh)',
};

/** Probe results of this process, kept on `globalThis` so that vitest's per-file module reloading does not probe again. */
const PROBES = Symbol.for('agentinfra.testkit.probes');
type ProbeCache = Map<string, ProbeResult>;
const processGlobals = globalThis as { [PROBES]?: ProbeCache };
processGlobals[PROBES] ??= new Map();
const cache: ProbeCache = processGlobals[PROBES];
const cacheKey = (spec: ServiceSpec) => `${spec.key} ${spec.url}`;

/**
 * Both servers, and pgvector on PostgreSQL, are probed (in parallel, about 1 s at most each) when this
 * module is first loaded in a process, so that the gating functions can answer
 * synchronously while vitest collects tests (`describe.each`, `describe.runIf`).
 */
await Promise.all(
  [postgres, redis, pgvector]
    .filter((spec) => !cache.has(cacheKey(spec)))
    .map(async (spec) => {
      cache.set(cacheKey(spec), await spec.probe(spec.url));
    }),
);

/** Applies the gating rule of the project's test conventions to the cached probe of `spec`. */
function gate(spec: ServiceSpec): ServiceAvailability {
  const url = redactUrl(spec.url);
  const result = cache.get(cacheKey(spec)) ?? { reachable: false, reason: 'not probed' };
  if (result.reachable) return { available: true, url };
  const problem = spec.problem(url, result.reason);
  if (servicesRequired()) {
    throw new Error(`[agentinfra] ${spec.label} is required (AGENTINFRA_TEST_REQUIRE_SERVICES=1) but ${problem}; ${spec.remedy}`);
  }
  printOncePerRun(spec.key, `[agentinfra] skipping ${spec.label} suites: ${problem}; ${spec.remedy}`);
  return { available: false, url, reason: result.reason };
}

/**
 * Whether suites needing PostgreSQL (`AGENTINFRA_TEST_DATABASE_URL`, default
 * `postgres://postgres@127.0.0.1:5432/test`) run. Reachable: `available: true`.
 * Unreachable: prints one `[agentinfra] skipping PostgreSQL suites: …` line per
 * test run and returns `available: false`.
 * @throws Error naming the URL (without password) and the reason when the
 *   server is unreachable and `AGENTINFRA_TEST_REQUIRE_SERVICES=1`, so the
 *   calling test file fails.
 * @example describe.runIf(postgresAvailability().available)('listen/notify', () => { … });
 */
export function postgresAvailability(): ServiceAvailability {
  return gate(postgres);
}

/**
 * Whether suites needing Redis ({@link testRedisUrl}) run; same rule as
 * {@link postgresAvailability}.
 * @throws Error when Redis is unreachable and `AGENTINFRA_TEST_REQUIRE_SERVICES=1`.
 * @example describe.runIf(redisAvailability().available)('redis lock', () => { … });
 */
export function redisAvailability(): ServiceAvailability {
  return gate(redis);
}

/**
 * Whether suites needing pgvector run: PostgreSQL is available (see
 * {@link postgresAvailability}, whose rule applies first) and its server
 * lists the `vector` extension. Without it: prints one `[agentinfra]
 * skipping pgvector suites: …` line per test run and returns
 * `available: false`.
 * @throws Error when PostgreSQL or pgvector is missing and
 *   `AGENTINFRA_TEST_REQUIRE_SERVICES=1` (CI installs pgvector).
 * @example it.runIf(pgvectorAvailability().available)('uses HNSW', async () => { … });
 */
export function pgvectorAvailability(): ServiceAvailability {
  const server = gate(postgres);
  if (!server.available) return server;
  return gate(pgvector);
}
