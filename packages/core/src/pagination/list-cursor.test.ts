import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createListCursor } from './list-cursor.js';

describe('list cursors', () => {
  const cursor = createListCursor({ schema: z.strictObject({ s: z.int().min(0) }), field: 'since' });

  it('round-trips a position and refuses anything encode did not make, naming the field', () => {
    expect(cursor.decode(cursor.encode({ s: 42 }))).toEqual({ s: 42 });
    for (const forged of [
      '',
      '42',
      'c1.',
      'c1.!!!',
      `c1.${Buffer.from('{"s":-1}').toString('base64url')}`,
      `c1.${Buffer.from('{"s":"1"}').toString('base64url')}`,
      `c1.${Buffer.from('{"s":1,"x":2}').toString('base64url')}`,
      `c1.${Buffer.from('{"s":1e300}').toString('base64url')}`,
      `c1.${Buffer.from([0x7b, 0x22, 0x73, 0x22, 0x3a, 0xff, 0x7d]).toString('base64url')}`,
    ]) {
      expect(() => cursor.decode(forged), forged).toThrow(
        expect.objectContaining({ status: 400, message: expect.stringMatching(/^since /) }),
      );
    }
  });

  // PostgreSQL refuses NUL in a text bind parameter: a cursor carrying one was a 500 there and a 200 on SQLite.
  it('refuses a blank position, or one whose strings escape NUL or a lone surrogate, which no list ever encodes', () => {
    const keyed = createListCursor({ schema: z.strictObject({ c: z.int(), i: z.string() }), field: 'cursor' });
    const anything = createListCursor({ schema: z.strictObject({ c: z.int().optional() }), field: 'cursor' });
    for (const blank of ['c1.', `c1.${Buffer.from(' \n').toString('base64url')}`]) {
      expect(() => anything.decode(blank), blank).toThrow(expect.objectContaining({ status: 400 }));
    }
    expect(keyed.decode(keyed.encode({ c: 1, i: 'agent-\u00e9' }))).toEqual({ c: 1, i: 'agent-\u00e9' });
    for (const forged of ['{"c":1,"i":"a\\u0000b"}', '{"c":1,"i":"\\ud800"}', '{"c":1,"i":"\\udc00x"}']) {
      expect(() => keyed.decode(`c1.${Buffer.from(forged).toString('base64url')}`), forged).toThrow(
        expect.objectContaining({ status: 400, message: expect.stringMatching(/^cursor /) }),
      );
    }
  });
});
