export { pgvectorAvailability, postgresAvailability, redisAvailability, type ServiceAvailability } from './service-availability.js';
export { PROBE_TIMEOUT_MS, type ProbeResult, probePgvector, probePostgres, probeRedis } from './service-probes.js';
export {
  DEFAULT_TEST_DATABASE_URL,
  DEFAULT_TEST_REDIS_URL,
  redactUrl,
  servicesRequired,
  testDatabaseUrl,
  testRedisUrl,
} from './service-urls.js';
export { startTcpProxy, type TcpProxy } from './tcp-proxy.js';
