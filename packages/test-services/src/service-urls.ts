/** Default of `AGENTINFRA_TEST_DATABASE_URL`: the local PostgreSQL with trust auth. */
export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
/** Default of `AGENTINFRA_TEST_REDIS_URL`: the local Redis. */
export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379';

/** PostgreSQL URL the test suites use: `AGENTINFRA_TEST_DATABASE_URL`, else {@link DEFAULT_TEST_DATABASE_URL}. */
export function testDatabaseUrl(): string {
  return process.env.AGENTINFRA_TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
}

/** Redis URL the test suites use: `AGENTINFRA_TEST_REDIS_URL`, else {@link DEFAULT_TEST_REDIS_URL}. */
export function testRedisUrl(): string {
  return process.env.AGENTINFRA_TEST_REDIS_URL || DEFAULT_TEST_REDIS_URL;
}

/** Whether suites needing a server must fail rather than skip when it is down (`AGENTINFRA_TEST_REQUIRE_SERVICES=1`, set by CI). */
export function servicesRequired(): boolean {
  return process.env.AGENTINFRA_TEST_REQUIRE_SERVICES === '1';
}

/**
 * `url` with its password (user info or `password` query parameter) replaced
 * by `***`, for the gating messages. WHATWG URL parsing; an unparsable value
 * is shown as `<unparsable URL>` since it may hold a password anywhere.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '<unparsable URL>';
  }
  if (parsed.password !== '') parsed.password = '***';
  if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
  return parsed.toString();
}
