import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isJsonValue, jsonValueSchema } from './json-value.js';

describe('jsonValueSchema', () => {
  it('accepts what z.json() accepts and refuses the rest', () => {
    const cases: unknown[] = [
      null,
      true,
      0,
      -1.5e300,
      '',
      'text',
      [],
      {},
      [1, 'a', null, false, { b: [{}] }],
      JSON.parse('{"__proto__": {"x": 1}, "constructor": "c"}'),
      Object.assign(Object.create(null), { a: 1 }),
      undefined,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      { a: undefined },
      [1, undefined],
      new Date(0),
      new Map(),
      () => 1,
      Symbol('s'),
      10n,
      { nested: { deeper: [new Uint8Array(1)] } },
    ];
    for (const value of cases) expect(isJsonValue(value), typeof value).toBe(z.json().safeParse(value).success);
    expect(jsonValueSchema.safeParse({ a: [1, 2] })).toEqual({ success: true, data: { a: [1, 2] } });
    expect(jsonValueSchema.safeParse({ a: Number.NaN }).success).toBe(false);
  });

  // #11: the recursive z.json() overflowed the stack on deep values (500 instead of 400).
  it('checks a value nested 100,000 levels deep without overflowing the stack', () => {
    let deep: unknown = 1;
    for (let level = 0; level < 100_000; level += 1) deep = level % 2 === 0 ? [deep] : { v: deep };
    expect(() => z.json().safeParse(deep)).toThrow(RangeError);
    expect(jsonValueSchema.safeParse(deep).success).toBe(true);
  });
});
