import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../logger.js';

/** A logger whose JSON lines tests read back: `lines` holds every line written so far, parsed. */
export interface CapturedLogger {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
}

/** A {@link CapturedLogger} at `level` (a pino level name), with the server's redaction rules. */
export function createCapturedLogger(level: string): CapturedLogger {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}
