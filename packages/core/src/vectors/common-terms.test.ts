import { describe, expect, it } from 'vitest';
import { COMMON_TERM_TTL_MS, COMMON_TERMS_MAX, createCommonTerms } from './common-terms.js';
import { MAX_LEXICAL_POSTINGS, selectiveTerms } from './lexical-terms.js';

const TOO_MANY = MAX_LEXICAL_POSTINGS + 1;

describe('createCommonTerms', () => {
  it('counts a word again only when it was not found too common within the last minute', () => {
    let clock = 0;
    const memo = createCommonTerms(() => clock);
    const asked: string[][] = [];
    const rows: Record<string, number> = { owner: 50_000, review: 9_000, kayak: 3 };
    const count = (unknown: string[]) => {
      asked.push(unknown);
      return unknown.map((term) => Math.min(rows[term] ?? 0, TOO_MANY));
    };
    expect(memo.counts(['owner', 'kayak', 'review'], count)).toEqual([TOO_MANY, 3, TOO_MANY]);
    expect(memo.counts(['review', 'kayak', 'owner'], count)).toEqual([TOO_MANY, 3, TOO_MANY]);
    expect(asked).toEqual([['owner', 'kayak', 'review'], ['kayak']]);
    expect(selectiveTerms(['review', 'kayak', 'owner'], [TOO_MANY, 3, TOO_MANY])).toEqual(['kayak']);
    memo.counts(['owner'], count);
    expect(asked).toHaveLength(2);
    clock += COMMON_TERM_TTL_MS;
    rows.owner = 10;
    expect(memo.counts(['owner'], count)).toEqual([10]);
    expect(asked.at(-1)).toEqual(['owner']);
  });

  it('forgets the least recently used words past its size', async () => {
    const memo = createCommonTerms(() => 0);
    const words = Array.from({ length: COMMON_TERMS_MAX + 1 }, (_, i) => `w${i}`);
    await memo.countsAsync(words, async (unknown) => unknown.map(() => TOO_MANY));
    const asked: string[][] = [];
    await memo.countsAsync(['w0', 'w1', `w${COMMON_TERMS_MAX}`], async (unknown) => {
      asked.push(unknown);
      return unknown.map(() => 0);
    });
    expect(asked).toEqual([['w0']]);
  });
});
