import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { type ServeLock, takeServeLock } from '@agentinfra/adapter-sqlite';
import { ConfigError, type Kernel, switchLogLevelOnSignal } from '@agentinfra/core';
import { warnWhenConfigReadableByOthers } from '../config-permissions.js';
import { sqliteFileIn } from '../data-dir.js';
import { buildKernel } from '../server.js';
import { configPath, runInit } from './init.js';
import { listenErrorOf } from './listen-error.js';
import { listeningLine } from './serve-banner.js';

/**
 * `agentinfra serve`: migrates, runs start-up checks, listens, and prints
 * one line `agentinfra listening on http://…` with the real port (see
 * {@link listeningLine}); a port in use is a CliError (exit 2, see {@link listenErrorOf}). Stops
 * gracefully on SIGTERM, SIGINT and SIGHUP (stop accepting, finish in-flight
 * requests and jobs, close the database); SIGUSR2 switches debug logging on
 * and off.
 * @param options.init write a starter config first when none exists and no bridge key is in the environment.
 */
export async function runServe(options: { config?: string; port?: number; host?: string; init?: boolean }): Promise<void> {
  const file = configPath(options.config);
  if (options.init && !existsSync(file) && !process.env.AGENTINFRA_BRIDGE_KEY) runInit({ config: file });
  // The signal handlers go in before start-up (config, migrations, module checks), which can take a while:
  // without them SIGUSR2 would kill the process and a stop signal would skip the orderly stop.
  const startup = handleSignalsDuringStartup();
  let built: Awaited<ReturnType<typeof buildKernel>>;
  try {
    built = await buildKernel({
      file: options.config,
      overrides: { port: options.port, host: options.host },
      surfaces: true,
    });
  } catch (error) {
    startup.finish();
    throw error;
  }
  const { kernel, config, summary, setListenUrl } = built;
  warnWhenConfigReadableByOthers(config, kernel.logger);
  let stopping = false;
  let lock: ServeLock | null = null;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    kernel.logger.info({ signal }, 'shutting down');
    kernel.stop().then(
      () => {
        lock?.release();
        process.exit(0);
      },
      (error: unknown) => {
        kernel.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const { stopSignal, toggledLogLevel } = startup.finish();
  for (const signal of STOP_SIGNALS) process.once(signal, () => stop(signal));
  switchLogLevelOnSignal(kernel.logger, kernel.config.log.level);
  // SIGUSR2 sent an odd number of times during start-up: switch now that the logger exists.
  if (toggledLogLevel) process.emit('SIGUSR2', 'SIGUSR2');
  if (stopSignal) {
    stop(stopSignal);
    return;
  }
  lock = kernel.sql.dialect === 'sqlite' ? await holdSqliteServeLock(kernel) : null;
  try {
    const listening = await kernel.listen();
    setListenUrl(listening.url);
    process.stdout.write(listeningLine(kernel, config, summary, listening));
  } catch (error) {
    await kernel.stop().catch(() => undefined);
    throw listenErrorOf(error, config);
  }
}

/**
 * Signals that stop `serve` gracefully. SIGHUP is one of them (there is no
 * configuration reload): a server started in a terminal that closes, or an
 * SSH session that drops, finishes its requests instead of being killed.
 */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * Catches the {@link STOP_SIGNALS} and SIGUSR2 while the kernel is being
 * built, before `serve` installs its own handlers. The first stop signal is
 * kept, to stop right after start-up; a second one exits at once (128 +
 * signal number), for a start-up that hangs. `finish` removes these handlers and
 * says what arrived.
 */
function handleSignalsDuringStartup(): { finish(): { stopSignal: NodeJS.Signals | null; toggledLogLevel: boolean } } {
  let stopSignal: NodeJS.Signals | null = null;
  let toggledLogLevel = false;
  const onStop = (signal: NodeJS.Signals) => {
    if (stopSignal) process.exit(128 + constants.signals[signal]);
    stopSignal = signal;
    process.stderr.write(`agentinfra: ${signal} during start-up: stopping once start-up is done (send it again to exit at once)\n`);
  };
  const onToggle = () => {
    toggledLogLevel = !toggledLogLevel;
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onStop);
  process.on('SIGUSR2', onToggle);
  return {
    finish() {
      for (const signal of STOP_SIGNALS) process.off(signal, onStop);
      process.off('SIGUSR2', onToggle);
      return { stopSignal, toggledLogLevel };
    },
  };
}

/**
 * Takes the lock that lets one process serve the SQLite database (see
 * `takeServeLock`): two servers on one file would each keep their own rate
 * limits, credential cache and job runner, and contend for every write.
 * @throws ConfigError (exit 2) when another process serves it; the kernel is stopped first.
 */
async function holdSqliteServeLock(kernel: Kernel): Promise<ServeLock> {
  const filename = sqliteFileIn(kernel.config.dataDir);
  const lock = takeServeLock({ filename });
  if (lock) return lock;
  await kernel.stop();
  throw new ConfigError(
    `Another process is already serving ${filename}, or re-embedding it with \`agentinfra migrate --reembed\` (it holds ` +
      `${filename}.serve-lock): a SQLite database is served by one process. Stop that one first (or let the re-embed finish), ` +
      'or run several replicas on PostgreSQL (docs/operations.md).',
  );
}
