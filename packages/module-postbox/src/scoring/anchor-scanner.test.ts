import { seededRandom } from '@agentinfra/core/testing';
import { describe, expect, it } from 'vitest';
import { createAnchorScanner, MAX_ANCHOR_LISTS, WHITESPACE_CODES } from './anchor-scanner.js';

/** What the scanner should report, the slow way: white space runs read as one space, then a substring search per string. */
function naiveScan(lists: readonly (readonly string[])[], text: string): number {
  const read = text.replace(/\s+/g, ' ');
  return lists.reduce((found, list, bit) => (list.some((anchor) => read.includes(anchor)) ? found | (1 << bit) : found), 0);
}

describe('createAnchorScanner', () => {
  it('reports every list with a string in the text, overlapping or inside another string', () => {
    const scan = createAnchorScanner([['he'], ['she'], ['hers'], ['his'], ['sh', 'rs']]);
    expect(scan('ushers')).toBe(0b10111);
    expect(scan('a hiss')).toBe(0b01000);
    expect(scan('nothing here')).toBe(0b00001);
    expect(scan('')).toBe(0);
  });

  it('compares UTF-16 code units, as a regular expression without flags does', () => {
    const scan = createAnchorScanner([['réponse'], ['l’ia'], ['ignore']]);
    expect(scan('dans ta réponse')).toBe(0b001);
    expect(scan('dans ta re\u0301ponse')).toBe(0);
    expect(scan("pour l’ia, l'ia")).toBe(0b010);
    expect(scan('ignore\u0301 this')).toBe(0b100);
  });

  it('reads each run of white space as one space', () => {
    const scan = createAnchorScanner([['from now on'], ['an den ki'], ['end of ']]);
    expect(scan('from\u00a0now \t\n on, do this')).toBe(0b001);
    expect(scan('an den\n\n\n   ki:')).toBe(0b010);
    expect(scan('the end of\u2028\u2029the mail')).toBe(0b100);
    expect(scan('from nowon')).toBe(0);
  });

  it('matches a slow substring search on random texts', () => {
    const random = seededRandom(31);
    const alphabet = ['a', 'b', 'c', 'é', ' ', '\t', '\n', '\u3000', "'"];
    const pick = (length: number) => Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    for (let round = 0; round < 200; round += 1) {
      const lists = Array.from({ length: 1 + Math.floor(random() * 6) }, () =>
        Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(1 + Math.floor(random() * 4)))
          .map((anchor) => anchor.replace(/\s+/g, ' '))
          .filter((anchor) => anchor !== ''),
      ).filter((list) => list.length > 0);
      const scan = createAnchorScanner(lists);
      for (let text = 0; text < 20; text += 1) {
        const sample = pick(Math.floor(random() * 40));
        expect(scan(sample), JSON.stringify({ lists, sample })).toBe(naiveScan(lists, sample));
      }
    }
  });

  it('reads as white space exactly what \\s matches', () => {
    const matched = Array.from({ length: 0x10000 }, (_, code) => code).filter((code) => /\s/.test(String.fromCharCode(code)));
    expect([...WHITESPACE_CODES].sort((a, b) => a - b)).toEqual(matched);
  });

  it('refuses strings it cannot find exactly, and more lists than bits', () => {
    expect(() => createAnchorScanner([['a', '']])).toThrow(/empty/);
    expect(() => createAnchorScanner([['two  spaces']])).toThrow(/single spaces/);
    expect(() => createAnchorScanner([['tab\there']])).toThrow(/single spaces/);
    expect(() => createAnchorScanner(Array.from({ length: MAX_ANCHOR_LISTS + 1 }, () => ['a']))).toThrow(/at most/);
    expect(createAnchorScanner(Array.from({ length: MAX_ANCHOR_LISTS }, (_, k) => [`<${k}>`]))('<30>')).toBe(1 << 30);
  });
});
