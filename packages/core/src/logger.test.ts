import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, LOGGED_ERROR_CHARS } from './logger.js';

/** A logger writing JSON lines into `lines`. */
function capturingLogger(lines: string[]) {
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return createLogger({ level: 'info', destination });
}

describe('createLogger', () => {
  // Review: a failed statement over 66,000 ids logged its whole SQL, values bound, as one line of megabytes.
  it("keeps the first characters of an error's message and stack, and says how many it left out", async () => {
    const lines: string[] = [];
    const logger = capturingLogger(lines);
    const statement = `update t set x = 1 where id in (${Array.from({ length: 20_000 }, (_, i) => `'id_${i}'`).join(', ')})`;
    logger.error({ err: new Error(`${statement} - too many SQL variables`) }, 'dependency failure');
    logger.error({ err: new Error('short') }, 'small');
    await new Promise((resolve) => setImmediate(resolve));
    const [long, short] = lines.map((line) => JSON.parse(line));
    expect(lines[0]?.length).toBeLessThan(3 * LOGGED_ERROR_CHARS + 1_000);
    expect(long.err.message).toMatch(/^update t set x = 1 where id in \('id_0', /);
    expect(long.err.message).toMatch(/… \(\d+ more characters\)$/);
    expect(long.err.type).toBe('Error');
    expect(short.err).toMatchObject({ type: 'Error', message: 'short' });
    expect(short.err.stack).toMatch(/^Error: short\n/);
  });
});
