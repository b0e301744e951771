import { describe, expect, it } from 'vitest';
import { encodedRuns, MAX_RUNS, MIN_BASE64_RUN, MIN_HEX_RUN } from './encoded-runs.js';

/** The runs found by reading every character (what `encodedRuns` must return). */
function everyCharacterRuns(text: string): { base64: string[]; hex: string[] } {
  const runsOf = (pattern: RegExp, min: number) => (text.match(pattern) ?? []).filter((run) => run.length >= min).slice(0, MAX_RUNS);
  return { base64: runsOf(/[A-Za-z0-9+/]+/g, MIN_BASE64_RUN), hex: runsOf(/[0-9a-fA-F]+/g, MIN_HEX_RUN) };
}

/** A deterministic pseudo-random generator (xorshift32), for repeatable texts. */
function randomFrom(seed: number): () => number {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

describe('encodedRuns', () => {
  it('finds the same runs as reading every character, at every length and place', () => {
    const random = randomFrom(17);
    const pieces = ['0123456789abcdef', 'ABCDEFabcdef', 'QmFzZTY0IHBheWxvYWQ+/', 'ghijk', ' ', '\n', '.', '-', 'é', '=', '😀'];
    for (let sample = 0; sample < 3_000; sample += 1) {
      let text = '';
      const parts = Math.floor(random() * 40);
      for (let part = 0; part < parts; part += 1) {
        const piece = pieces[Math.floor(random() * pieces.length)] ?? '';
        text += piece.repeat(1 + Math.floor(random() * 6)).slice(0, 1 + Math.floor(random() * 50));
      }
      expect(encodedRuns(text)).toEqual(everyCharacterRuns(text));
    }
  });

  it('stops at eight runs of each kind', () => {
    const text = Array.from({ length: 12 }, (_, i) => `${'a1'.repeat(20)}${i} ${'Zz'.repeat(25)}`).join(' ');
    const runs = encodedRuns(text);
    expect([runs.base64.length, runs.hex.length]).toEqual([MAX_RUNS, MAX_RUNS]);
    expect(runs).toEqual(everyCharacterRuns(text));
  });

  it('finds runs at the very start and end of the text', () => {
    const hex = 'f'.repeat(MIN_HEX_RUN);
    expect(encodedRuns(`${hex} x ${hex}`).hex).toEqual([hex, hex]);
    expect(encodedRuns(hex.slice(1)).hex).toEqual([]);
  });
});
