import { describe, expect, it } from 'vitest';
import { seededRandom } from './build/seeded-random.js';
import { addDequantized, quantizeInt8 } from './int8-quantization.js';

describe('int8 quantisation', () => {
  it('round-trips every value within half a step (max|v| / 254)', () => {
    const random = seededRandom(1);
    for (let trial = 0; trial < 200; trial += 1) {
      const magnitude = 10 ** (random() * 6 - 3);
      const vector = Float32Array.from({ length: 100 }, () => (random() * 2 - 1) * magnitude);
      const codes = new Int8Array(100);
      const scale = quantizeInt8(vector, codes);
      const restored = new Float32Array(100);
      addDequantized(codes, 0, 100, scale, 1, restored);
      const maxAbs = Math.max(...vector.map(Math.abs));
      for (let i = 0; i < 100; i += 1) {
        expect(Math.abs((restored[i] ?? 0) - (vector[i] ?? 0))).toBeLessThanOrEqual((maxAbs / 254) * (1 + 1e-5));
      }
    }
  });

  it('keeps the largest value exact and uses the full code range', () => {
    const codes = new Int8Array(3);
    const scale = quantizeInt8([0.5, -2, 1], codes);
    expect(scale).toBeCloseTo(2 / 127, 9);
    expect(Array.from(codes)).toEqual([32, -127, 64]);
  });

  it('gives scale 0 and zero codes for the zero vector', () => {
    const codes = new Int8Array(4).fill(5);
    expect(quantizeInt8([0, 0, 0, 0], codes)).toBe(0);
    expect(Array.from(codes)).toEqual([0, 0, 0, 0]);
  });

  it('writes at an offset and adds weighted values into the target', () => {
    const codes = new Int8Array(6);
    const scale = quantizeInt8([1, -1, 0], codes, 3);
    expect(Array.from(codes.subarray(0, 3))).toEqual([0, 0, 0]);
    const target = Float32Array.from([1, 1, 1]);
    addDequantized(codes, 3, 3, scale, 2, target);
    expect(Array.from(target).map((value) => Number(value.toFixed(2)))).toEqual([3, -1, 1]);
  });
});
