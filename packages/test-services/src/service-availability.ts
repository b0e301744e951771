import { type ProbeResult, probePostgres, probeRedis } from './service-probes.js';
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

/** A server the test suites may need. */
interface ServiceSpec {
  key: 'postgres' | 'redis';
  label: string;
  envVar: string;
  url: string;
  probe(url: string): Promise<ProbeResult>;
}

const postgres: ServiceSpec = {
  key: 'postgres',
  label: 'PostgreSQL',
  envVar: 'AGENTINFRA_TEST_DATABASE_URL',
  url: testDatabaseUrl(),
  probe: probePostgres,
};
const redis: ServiceSpec = {
  key: 'redis',
  label: 'Redis',
  envVar: 'AGENTINFRA_TEST_REDIS_URL',
  url: testRedisUrl(),
  probe: probeRedis,
};

/** Probe results of this process, kept on `globalThis` so that vitest's per-file module reloading does not probe again. */
const PROBES = Symbol.for('agentinfra.testkit.probes');
type ProbeCache = Map<string, ProbeResult>;
const processGlobals = globalThis as { [PROBES]?: ProbeCache };
processGlobals[PROBES] ??= new Map();
const cache: ProbeCache = processGlobals[PROBES];
const cacheKey = (spec: ServiceSpec) => `${spec.key} ${spec.url}`;

/**
 * Both servers are probed (in parallel, about 1 s at most each) when this
 * module is first loaded in a process, so that the gating functions can answer
 * synchronously while vitest collects tests (`describe.each`, `describe.runIf`).
 */
await Promise.all(
  [postgres, redis]
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
  if (servicesRequired()) {
    throw new Error(
      `[agentinfra] ${spec.label} is required (AGENTINFRA_TEST_REQUIRE_SERVICES=1) but cannot connect to ${url} ` +
        `(${result.reason}); start it or set ${spec.envVar}`,
    );
  }
  printOncePerRun(spec.key, `[agentinfra] skipping ${spec.label} suites: cannot connect to ${url} (${result.reason}); set ${spec.envVar}`);
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
