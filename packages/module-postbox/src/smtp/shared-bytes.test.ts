import { describe, expect, it } from 'vitest';
import { createSharedBytes } from './shared-bytes.js';

describe('createSharedBytes', () => {
  it('keeps the chunks in order in shared memory, without a final copy', () => {
    const collected = createSharedBytes(1024 * 1024);
    const chunks = Array.from({ length: 40 }, (_, index) => Buffer.alloc(10_000 + index, index));
    for (const chunk of chunks) collected.add(chunk);
    const bytes = collected.bytes();
    expect(bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(collected.bytes().buffer).toBe(bytes.buffer);
    expect(collected.size).toBe(Buffer.concat(chunks).length);
    expect(bytes.equals(Buffer.concat(chunks))).toBe(true);
  });

  it('counts bytes past the limit without keeping them', () => {
    const collected = createSharedBytes(2_000);
    collected.add(Buffer.alloc(1_500, 1));
    collected.add(Buffer.alloc(1_500, 2));
    collected.add(Buffer.alloc(10, 3));
    expect(collected.size).toBe(3_010);
    expect(collected.bytes().equals(Buffer.concat([Buffer.alloc(1_500, 1), Buffer.alloc(500, 2)]))).toBe(true);
  });

  it('gives an empty buffer for an empty message', () => {
    const collected = createSharedBytes(1_024);
    expect(collected.bytes().length).toBe(0);
    expect(collected.size).toBe(0);
  });
});
