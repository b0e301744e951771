import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './list-cursor.js';

describe('list cursors', () => {
  it('round-trips and refuses anything /list did not make', () => {
    expect(decodeCursor(encodeCursor(42))).toBe(42);
    for (const forged of [
      '',
      '42',
      'c1.',
      'c1.!!!',
      `c1.${Buffer.from('{"s":-1}').toString('base64url')}`,
      `c1.${Buffer.from('{"s":"1"}').toString('base64url')}`,
    ]) {
      expect(() => decodeCursor(forged), forged).toThrow(/cursor/);
    }
  });
});
