import { findTool } from '@agentinfra/testkit';

/** What the suites run: the servers, and openssl for pebble's TLS files (./pebble-tls.ts). */
const TOOLS = ['pebble', 'pebble-challtestsrv', 'knotd', 'openssl'] as const;

/**
 * Whether the ACME and DNS test servers (Debian's `pebble`,
 * `pebble-challtestsrv`, `knotd`) and openssl are installed for the suite
 * named `suite`: found in `TOOL_PATH` (./tool-path.ts), the PATH
 * `startProcess` and pebble-tls.ts run them with, which adds /usr/sbin
 * (knotd's home) and /sbin to this process's PATH.
 * Missing: prints one `[agentinfra] skipping <suite>: …` line, under the
 * calling test file in vitest's output, so every skipped suite says why
 * (#13); or the calling file fails under `AGENTINFRA_TEST_REQUIRE_SERVICES=1`
 * (CI). `.ci/start-pebble.sh` installs them.
 * @throws Error naming the suite and the missing tools when services are required.
 * @example describe.runIf(acmeToolsAvailable('HTTP-01 with real validation'))('HTTP-01 …', () => { … });
 */
export function acmeToolsAvailable(suite: string): boolean {
  const missing = TOOLS.filter((tool) => findTool(tool) === undefined);
  if (missing.length === 0) return true;
  const why = `${missing.join(', ')} not installed; run .ci/start-pebble.sh (apt-get install pebble knot openssl)`;
  if (process.env.AGENTINFRA_TEST_REQUIRE_SERVICES === '1') {
    throw new Error(`[agentinfra] ${suite} needs the ACME test servers (AGENTINFRA_TEST_REQUIRE_SERVICES=1) but ${why}`);
  }
  console.warn(`[agentinfra] skipping ${suite}: ${why}`);
  return false;
}
