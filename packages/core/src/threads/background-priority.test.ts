import { getPriority } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createJsonParsePool } from '../kernel/json-parse-pool.js';
import { threadNiceValues, threadsNicedSince } from '../testing/thread-priority.js';
import { BACKGROUND_THREAD_NICE, lowerBackgroundThreadPriority } from './background-priority.js';

describe('lowerBackgroundThreadPriority', () => {
  it('never lowers the main thread, which runs the event loop', () => {
    const before = getPriority();
    expect(lowerBackgroundThreadPriority()).toBe(false);
    expect(getPriority()).toBe(before);
  });

  it.runIf(process.platform === 'linux')('lowers a JSON parse thread, and that thread alone', async () => {
    const before = threadNiceValues();
    const pool = createJsonParsePool({ threads: 1 });
    try {
      expect(await pool.parse(new TextEncoder().encode('{"a":1}'))).toStrictEqual({ ok: true, value: { a: 1 } });
      expect(threadsNicedSince(before, BACKGROUND_THREAD_NICE)).toHaveLength(1);
      expect(threadNiceValues().get(process.pid)).toBe(before.get(process.pid));
    } finally {
      await pool.close();
    }
  });
});
