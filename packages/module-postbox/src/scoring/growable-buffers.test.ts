import { describe, expect, it } from 'vitest';
import { FloatBuffer, IntBuffer } from './growable-buffers.js';

describe('growable buffers', () => {
  it('grow past their first storage, keep every value and start over at length 0', () => {
    const floats = new FloatBuffer();
    const ints = new IntBuffer();
    for (let i = 0; i < 5_000; i += 1) {
      floats.push(i + 0.25);
      ints.push(i);
    }
    expect([floats.length, ints.length]).toEqual([5_000, 5_000]);
    expect(floats.values[4_999]).toBe(4_999.25);
    expect(ints.values[1_024]).toBe(1_024);
    floats.length = 0;
    floats.push(-1.5);
    expect([floats.length, floats.values[0]]).toEqual([1, -1.5]);
  });
});
