import type { ServerConfig } from '@agentinfra/core';
import { CliError } from '../cli-error.js';

/**
 * The error `serve` reports when the API's (or the metrics') port cannot be bound because it is in use: one line
 * naming the address and how to choose another port, exit 2 (a setting to change, like a data directory another
 * `serve` holds). Any other error is returned as it is.
 * @param error what `kernel.listen()` rejected with (Node's `listen EADDRINUSE` carries `address` and `port`).
 */
export function listenErrorOf(error: unknown, config: ServerConfig): unknown {
  const { code, address, port } = error as { code?: string; address?: string; port?: number };
  if (code !== 'EADDRINUSE' || address === undefined || port === undefined) return error;
  const where = `${address.includes(':') ? `[${address}]` : address}:${port}`;
  const metrics = config.core.metrics;
  if (metrics.enabled && metrics.port === port && config.core.port !== port) {
    return new CliError(
      `cannot listen on ${where} for /metrics: the address is already in use; choose another port with AGENTINFRA_METRICS_PORT (metrics.port).`,
      2,
    );
  }
  return new CliError(
    `cannot listen on ${where}: the address is already in use (another agentinfra serve, or another program); ` +
      'choose another port with --port N (from the repository: pnpm start --port N) or AGENTINFRA_PORT.',
    2,
  );
}
