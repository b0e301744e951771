import { describe, expect, it } from 'vitest';
import { isToken, tokenize, tokenizeInPieces } from './text-tokens.js';

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

describe('tokenizeInPieces', () => {
  it('gives the tokens of tokenize, whatever the piece length', () => {
    const texts = [
      'ΣΊΣΥΦΟΣ ΟΔΟΣ and Σ alone; ﬁne ｆｕｌｌ e\u0301 cafe\u0301 ①② ',
      ' leading  and trailing spaces ',
      'a'.repeat(50),
      `${'word '.repeat(30)}${'x'.repeat(40)} tail`,
      '',
    ];
    for (const text of texts) {
      for (const length of [1, 2, 3, 7, 16, 1_000]) {
        expect([...tokenizeInPieces(text, length)].flat(), `${JSON.stringify(text)} / ${length}`).toEqual(tokenize(text));
      }
    }
  });

  // #11: a long text is tokenised a bounded piece at a time.
  it('cuts a long text into pieces of at most the given length, except runs without spaces', () => {
    const pieces = [...tokenizeInPieces('alpha beta gamma delta '.repeat(1_000), 100)];
    expect(pieces.length).toBeGreaterThan(200);
    for (const tokens of pieces) expect(tokens.join(' ').length).toBeLessThanOrEqual(100);
    expect([...tokenizeInPieces('z'.repeat(500), 100)]).toEqual([['z'.repeat(500)]]);
  });
});
