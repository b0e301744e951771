import { describe, expect, it } from 'vitest';
import { lexicalTerms, MAX_LEXICAL_POSTINGS, MAX_LEXICAL_TERM_LENGTH, MAX_LEXICAL_TERMS, selectiveTerms } from './lexical-terms.js';

describe('lexicalTerms', () => {
  it('keeps words after NFKC and lower-casing, without stop words and repeats', () => {
    expect(lexicalTerms("What is the user's GitHub handle? GITHUB!")).toEqual(['user', 'github', 'handle']);
  });

  it(`drops words longer than ${MAX_LEXICAL_TERM_LENGTH} characters and keeps at most ${MAX_LEXICAL_TERMS}`, () => {
    const long = 'a'.repeat(16_000);
    expect(lexicalTerms(`${long} walrus ${'b'.repeat(MAX_LEXICAL_TERM_LENGTH)}`)).toEqual(['walrus', 'b'.repeat(MAX_LEXICAL_TERM_LENGTH)]);
    const many = Array.from({ length: 2_000 }, (_, i) => `word${i}`).join(' ');
    expect(lexicalTerms(many)).toHaveLength(MAX_LEXICAL_TERMS);
  });
});

describe('selectiveTerms', () => {
  it(`keeps the rarest words while their matches stay within ${MAX_LEXICAL_POSTINGS}, and none that match nothing`, () => {
    expect(selectiveTerms(['common', 'rare', 'absent', 'middle'], [MAX_LEXICAL_POSTINGS + 1, 3, 0, 1_500])).toEqual(['rare', 'middle']);
    expect(selectiveTerms(['a', 'b'], [1_200, 1_200])).toEqual(['a']);
    expect(selectiveTerms(['common'], [MAX_LEXICAL_POSTINGS + 1])).toEqual([]);
  });
});
