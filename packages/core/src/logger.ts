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

/** Characters of an error's message and stack kept in a log line. */
export const LOGGED_ERROR_CHARS = 2_000;

/** `text` cut to {@link LOGGED_ERROR_CHARS}, saying how much was left out. */
function clipped(text: string | undefined): string | undefined {
  if (text === undefined || text.length <= LOGGED_ERROR_CHARS) return text;
  return `${text.slice(0, LOGGED_ERROR_CHARS)}… (${text.length - LOGGED_ERROR_CHARS} more characters)`;
}

/**
 * pino's error serializer with the message and stack clipped: a database
 * error's message holds its whole statement with the values bound (knex),
 * which for a statement over thousands of ids is megabytes on one line.
 */
function clippedError(error: Error): pino.SerializedError {
  const serialized = pino.stdSerializers.err(error);
  return { ...serialized, message: clipped(serialized.message) ?? '', stack: clipped(serialized.stack) ?? '' };
}

/**
 * How log lines are written: `json` (one object per line), `pretty` (colour,
 * for people), `auto` (pretty when stdout is a terminal, else JSON).
 */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * The server's logger (pino). Anything that looks like a credential or
 * secret is redacted if it ever reaches a log object (`[redacted]`), and an
 * `err`'s message and stack keep their first {@link LOGGED_ERROR_CHARS} characters.
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
      serializers: { err: clippedError },
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
