import { describe, expect, it } from 'vitest';
import { fitsOneRead, forEachNgram, MAX_READ_CHARS, MAX_WORDS, READ_OVERLAP_CHARS, readWindows } from './text-ngrams.js';

/** Whether the n-gram pass reads every word of `text` (the words it reads, and whether it stopped early). */
function readsWhole(text: string): boolean {
  return (
    text.length <= MAX_READ_CHARS &&
    forEachNgram(
      text,
      () => undefined,
      () => undefined,
    )
  );
}

/** Checks the windows of `text` (lower case, as the scorer reads it): they cover it, each is read whole, each starts after the last, overlaps are bounded, and together they are at most `factor` times the text. */
function checkWindows(text: string, factor: number): Array<[number, number]> {
  const flat = readWindows(text);
  const windows: Array<[number, number]> = [];
  for (let k = 0; k < flat.length; k += 2) windows.push([flat[k] ?? -1, flat[k + 1] ?? -1]);
  expect(windows[0]?.[0]).toBe(0);
  expect(windows.at(-1)?.[1]).toBe(text.length);
  let total = 0;
  windows.forEach(([start, end], k) => {
    expect(end).toBeGreaterThan(start);
    expect(readsWhole(text.slice(start, end)), `window ${k}`).toBe(true);
    total += end - start;
    const previous = windows[k - 1];
    if (!previous) return;
    expect(start).toBeGreaterThan(previous[0]);
    expect(start).toBeLessThanOrEqual(previous[1]);
    expect(previous[1] - start).toBeLessThanOrEqual(READ_OVERLAP_CHARS);
  });
  expect(total).toBeLessThanOrEqual(factor * text.length);
  return windows;
}

describe('windows of a text longer than one read', () => {
  it('tells a text one read covers: characters and words', () => {
    expect(fitsOneRead('hello there.')).toBe(true);
    expect(fitsOneRead('a'.repeat(MAX_READ_CHARS))).toBe(true);
    expect(fitsOneRead('a'.repeat(MAX_READ_CHARS + 1))).toBe(false);
    expect(fitsOneRead('a '.repeat(MAX_WORDS))).toBe(true);
    expect(fitsOneRead('a '.repeat(MAX_WORDS + 1))).toBe(false);
    // Apostrophes inside words do not split them, as the n-gram pass reads them.
    expect(fitsOneRead("l'a ".repeat(MAX_WORDS))).toBe(true);
    expect(fitsOneRead('l a '.repeat(MAX_WORDS / 2 + 1))).toBe(false);
    expect(readWindows('hello there.')).toEqual([0, 12]);
  });

  it('reads every sentence whole in one window, windows starting where sentences start', () => {
    const sentences = ['Thanks for your order, it ships on Monday.', 'Could you send the slides before Thursday?', 'Regards, Sam'];
    // Sentences of 40 to ~1,900 characters.
    const parts: string[] = [];
    for (let k = 0, length = 0; length < 400_000; k += 1) {
      parts.push(k % 37 === 0 ? `${'long clause, '.repeat(k % 150)}the end.` : (sentences[k % sentences.length] ?? ''));
      length += (parts.at(-1)?.length ?? 0) + 1;
    }
    // The scorer reads lower-cased text (an upper-case letter is no word character).
    const joined = parts
      .map((part, k) => `${part}${k % 5 === 4 ? '\n' : ' '}`)
      .join('')
      .toLowerCase();
    const windows = checkWindows(joined, 1.2);
    let at = 0;
    for (const part of parts) {
      const start = at;
      const end = at + part.length;
      at = end + 1;
      expect(
        windows.some(([from, to]) => from <= start && end <= to),
        `${start}`,
      ).toBe(true);
    }
    for (const [start] of windows.slice(1)) expect(joined.slice(start - 2, start)).toMatch(/^[.?!]\s$|\n$|^\s\n$/);
  });

  it('stays linear on hostile text', () => {
    const MiB = 1_048_576;
    for (const [name, text] of [
      ['one-letter words', 'a '.repeat(MiB / 2)],
      ['one token', 'a'.repeat(MiB)],
      ['short lines', 'ok?\n'.repeat(MiB / 4)],
      ['line breaks', '\n'.repeat(MiB)],
      ['no space after dots', 'a.'.repeat(MiB / 2)],
      ['words 10,000 spaces apart', `word${' '.repeat(10_000)}`.repeat(100)],
      ['apostrophes', "l'a ".repeat(MiB / 4)],
    ] as const) {
      const started = performance.now();
      const windows = checkWindows(text, 1.4);
      expect(windows.length, name).toBeLessThanOrEqual(Math.ceil(text.length / 6_000) + 1);
      expect(performance.now() - started, name).toBeLessThan(5_000);
    }
  });
});
