import { describe, expect, it } from 'vitest';
import { newTimeOrderedId } from './time-ordered-id.js';

describe('newTimeOrderedId', () => {
  it('is the prefix plus 22 URL-safe characters, and unique', () => {
    const ids = Array.from({ length: 2_000 }, () => newTimeOrderedId('mem_', 1_795_000_000_000));
    for (const id of ids) expect(id).toMatch(/^mem_[0-9a-z]{9}[A-Za-z0-9_-]{13}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('sorts by time, byte-wise and with a linguistic collation alike', () => {
    const times = [0, 1, 35, 36, 1_000, 1_795_000_000_000, 1_795_000_000_001, 1_795_000_086_400, 36 ** 9 - 1];
    const ids = times.map((time) => newTimeOrderedId('mem_', time));
    expect([...ids].sort()).toEqual(ids);
    expect([...ids].sort(new Intl.Collator('en').compare).map((id) => id.slice(0, 13))).toEqual(ids.map((id) => id.slice(0, 13)));
  });

  it('refuses times it cannot encode', () => {
    expect(() => newTimeOrderedId('mem_', -1)).toThrow(RangeError);
    expect(() => newTimeOrderedId('mem_', 1.5)).toThrow(RangeError);
    expect(() => newTimeOrderedId('mem_', 36 ** 9)).toThrow(RangeError);
  });
});
