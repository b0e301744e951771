import { describe, expect, it } from 'vitest';
import { isToken, tokenize } from './text-tokens.js';

describe('tokenize', () => {
  it('lower-cases words and drops punctuation', () => {
    expect(tokenize("The user's API key: rotate it!")).toEqual(['the', 'user', 's', 'api', 'key', 'rotate', 'it']);
  });

  it('keeps accented letters, digits and scripts without spaces as words', () => {
    expect(tokenize('Clínica Sorriso, São Paulo 2024')).toEqual(['clínica', 'sorriso', 'são', 'paulo', '2024']);
    expect(tokenize('日本語')).toEqual(['日本語']);
  });

  it('makes each emoji a token and normalises full-width letters (NFKC)', () => {
    expect(tokenize('ship it 🚀🎉')).toEqual(['ship', 'it', '🚀', '🎉']);
    expect(tokenize('ＡＰＩ')).toEqual(['api']);
  });

  it('gives no token for empty, blank or punctuation-only text', () => {
    expect(tokenize('')).toEqual([]);
    expect(tokenize(' \n\t ')).toEqual([]);
    expect(tokenize('?!…')).toEqual([]);
  });

  it('tells which vocabulary entries it can produce', () => {
    expect(isToken('coffee')).toBe(true);
    expect(isToken("n't")).toBe(false);
    expect(isToken('e-mail')).toBe(false);
    expect(isToken('Coffee')).toBe(false);
  });
});
