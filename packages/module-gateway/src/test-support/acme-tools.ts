import { execFileSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

const TOOLS = ['pebble', 'pebble-challtestsrv', 'knotd'] as const;

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command} || test -x /usr/sbin/${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Prints `line` once per vitest run (a marker file named after the run's process), like the testkit's skip notices. */
function printOnce(line: string): void {
  const runPid = isMainThread ? process.ppid : process.pid;
  try {
    closeSync(openSync(join(tmpdir(), `agentinfra-gateway-tools-${runPid}`), 'wx'));
  } catch {
    return;
  }
  console.warn(line);
}

/**
 * Whether the ACME and DNS test servers (Debian's `pebble`,
 * `pebble-challtestsrv`, `knotd`) are installed. Missing: the suites that
 * need them are skipped after one printed line, or the calling file fails
 * under `AGENTINFRA_TEST_REQUIRE_SERVICES=1` (CI). `.ci/start-pebble.sh`
 * installs them.
 * @throws Error when a tool is missing and services are required.
 */
export function acmeToolsAvailable(): boolean {
  const missing = TOOLS.filter((tool) => !onPath(tool));
  if (missing.length === 0) return true;
  const why = `${missing.join(', ')} not installed; run .ci/start-pebble.sh (apt-get install pebble knot)`;
  if (process.env.AGENTINFRA_TEST_REQUIRE_SERVICES === '1') throw new Error(`[agentinfra] ACME test servers are required but ${why}`);
  printOnce(`[agentinfra] skipping ACME gateway suites: ${why}`);
  return false;
}
