import { existsSync } from 'node:fs';
import { switchLogLevelOnSignal } from '@agentinfra/core';
import { buildKernel } from '../server.js';
import { configPath, runInit } from './init.js';

/**
 * `agentinfra serve`: migrates, runs start-up checks, listens, and prints
 * one line `agentinfra listening on http://…` with the real port. Stops
 * gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests
 * and jobs, close the database); SIGUSR2 switches debug logging on and off.
 * @param options.init write a starter config first when none exists and no bridge key is in the environment.
 */
export async function runServe(options: { config?: string; port?: number; host?: string; init?: boolean }): Promise<void> {
  const file = configPath(options.config);
  if (options.init && !existsSync(file) && !process.env.AGENTINFRA_BRIDGE_KEY) runInit({ config: file });
  const { kernel, summary, setListenUrl } = await buildKernel({
    file: options.config,
    overrides: { port: options.port, host: options.host },
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    kernel.logger.info({ signal }, 'shutting down');
    kernel.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        kernel.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  switchLogLevelOnSignal(kernel.logger, kernel.config.log.level);
  try {
    const { url } = await kernel.listen();
    setListenUrl(url);
    const extras = kernel.describeModules();
    process.stdout.write(`agentinfra listening on ${url} (${[summary, ...extras].join('; ')})\n`);
  } catch (error) {
    await kernel.stop().catch(() => undefined);
    throw error;
  }
}
