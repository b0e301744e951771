import pino, { type Logger } from 'pino';

/**
 * The server's JSON logger (pino). Anything that looks like a credential or
 * secret is redacted if it ever reaches a log object.
 */
export function createLogger(options: { level: string; destination?: pino.DestinationStream }): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'agentinfra' },
      redact: {
        paths: [
          'authorization',
          'apikey',
          '*.authorization',
          '*.apikey',
          'headers.authorization',
          'headers.apikey',
          '*.device_key',
          '*.token',
          '*.secret',
          '*.bridgeKey',
          '*.masterKey',
          '*.apiKey',
        ],
        censor: '[redacted]',
      },
    },
    options.destination,
  );
}
