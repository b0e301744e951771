import { existsSync } from 'node:fs';
import { findTool } from '@agentinfra/testkit';

/** Whether this process runs as root (network namespaces, `wg-quick strip`, nft need it). */
export const isRoot = process.getuid?.() === 0;
/** Whether the TUN device wireguard-go needs exists. */
export const hasTun = existsSync('/dev/net/tun');
/** Suites needing a missing tool or privilege fail instead of skipping (CI sets it). */
const required = process.env.AGENTINFRA_TEST_REQUIRE_SERVICES === '1';

/**
 * Which of `commands` are not installed: not found in `TOOL_PATH`, the PATH
 * `runCommand` and the namespace lab run them with (./tool-path.ts).
 */
export function missingCommands(commands: readonly string[]): string[] {
  return commands.filter((command) => findTool(command) === undefined);
}

/**
 * Decides whether a suite needing `commands` (and, with `privileged`, root
 * and /dev/net/tun) runs. When it cannot: with
 * `AGENTINFRA_TEST_REQUIRE_SERVICES=1` it throws, so the file fails;
 * otherwise it prints one line saying why and the suite is skipped.
 */
export function wireguardGate(options: { suite: string; commands: readonly string[]; privileged?: boolean }): boolean {
  const missing = missingCommands(options.commands);
  let reason: string | undefined;
  if (missing.length > 0) reason = `${missing.join(', ')} not installed (run .ci/install-wireguard.sh)`;
  else if (options.privileged && !isRoot) reason = 'not running as root, so no network namespaces can be made';
  else if (options.privileged && !hasTun) reason = '/dev/net/tun is missing, so wireguard-go cannot run';
  if (!reason) return true;
  if (required) throw new Error(`[agentinfra] ${options.suite} must run (AGENTINFRA_TEST_REQUIRE_SERVICES=1) but ${reason}`);
  console.warn(`[agentinfra] skipping ${options.suite}: ${reason}`);
  return false;
}
