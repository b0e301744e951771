import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

/** Field names whose values are credentials, secrets or private text; redacted at the top level and one level down. */
const SECRET_FIELDS = [
  'authorization',
  'apikey',
  'device_key',
  'token',
  'grant_token',
  'secret',
  'password',
  'bridgeKey',
  'masterKey',
  'previousMasterKeys',
  'apiKey',
  'secretKey',
];

/**
 * How log lines are written: `json` (one object per line), `pretty` (colour,
 * for people), `auto` (pretty when stdout is a terminal, else JSON).
 */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * The server's logger (pino). Anything that looks like a credential or
 * secret is redacted if it ever reaches a log object (`[redacted]`).
 * @param options.level pino level (`info`, `debug`, … `silent`).
 * @param options.format see {@link LogFormat}; default `json`. Ignored with a `destination`.
 * @param options.destination where the JSON lines go (tests capture them); default stdout.
 */
export function createLogger(options: { level: string; format?: LogFormat; destination?: pino.DestinationStream }): Logger {
  const humans = options.format === 'pretty' || (options.format === 'auto' && process.stdout.isTTY === true);
  const destination = options.destination ?? (humans ? pretty({ colorize: true, sync: true }) : undefined);
  return pino(
    {
      level: options.level,
      base: { service: 'agentinfra' },
      redact: {
        paths: [...SECRET_FIELDS, ...SECRET_FIELDS.map((field) => `*.${field}`), 'headers.authorization', 'headers.apikey'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/**
 * Lets an operator turn debug logging on and off at run time: each
 * `signal` (SIGUSR2 by default) switches between the configured level and
 * `debug` (`info` when `debug` or `trace` is configured), and logs the switch
 * at `warn` so it is always visible: `{previous_level, log_level, signal}`
 * (not `level`, which is pino's own numeric field of the line).
 * @returns a function that removes the signal handler.
 */
export function switchLogLevelOnSignal(logger: Logger, configured: string, signal: NodeJS.Signals = 'SIGUSR2'): () => void {
  const other = configured === 'debug' || configured === 'trace' ? 'info' : 'debug';
  const handler = () => {
    const previous = logger.level;
    logger.level = previous === configured ? other : configured;
    logger.warn({ previous_level: previous, log_level: logger.level, signal }, 'log level changed');
  };
  process.on(signal, handler);
  return () => process.off(signal, handler);
}
