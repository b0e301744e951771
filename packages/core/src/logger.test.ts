import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, switchLogLevelOnSignal } from './logger.js';

/** A logger whose JSON lines are collected, parsed. */
function capturedLogger(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}

describe('switchLogLevelOnSignal', () => {
  it('toggles between the configured level and debug, logging the switch without a second `level` key', () => {
    const { logger, lines } = capturedLogger('info');
    const remove = switchLogLevelOnSignal(logger, 'info', 'SIGUSR2');
    try {
      process.emit('SIGUSR2', 'SIGUSR2');
      expect(logger.level).toBe('debug');
      process.emit('SIGUSR2', 'SIGUSR2');
      expect(logger.level).toBe('info');
    } finally {
      remove();
    }
    const switches = lines.filter((line) => line.msg === 'log level changed');
    expect(switches.map((line) => [line.level, line.previous_level, line.log_level])).toEqual([
      [40, 'info', 'debug'],
      [40, 'debug', 'info'],
    ]);
  });

  it('redacts credentials wherever they appear', () => {
    const { logger, lines } = capturedLogger('info');
    logger.info({ device_key: 'dk_secret', nested: { token: 'dt_secret' } }, 'x');
    expect(JSON.stringify(lines)).not.toMatch(/dk_secret|dt_secret/);
  });
});
