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
    ]) {
      expect(() => cursor.decode(forged), forged).toThrow(
        expect.objectContaining({ status: 400, message: expect.stringMatching(/^since /) }),
      );
    }
  });
});
