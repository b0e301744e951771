/**
 * Words the embedder looks up: runs of letters, combining marks and digits,
 * plus each pictograph (emoji) on its own. Punctuation and whitespace separate
 * tokens and are dropped, so `user's` gives `user` and `s`, and
 * `api.northwind.example` gives three words.
 */
const TOKEN_PATTERN = /[\p{L}\p{M}\p{N}]+|\p{Extended_Pictographic}/gu;

/**
 * Splits text into lower-case word tokens after Unicode NFKC normalisation
 * (so full-width letters and ligatures meet their plain forms).
 * @returns the tokens in text order; `[]` for text without letters, digits or emoji.
 */
export function tokenize(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(TOKEN_PATTERN) ?? [];
}

/** Whether {@link tokenize} can produce `word` as one token (vocabulary entries it cannot are never looked up). */
export function isToken(word: string): boolean {
  const tokens = tokenize(word);
  return tokens.length === 1 && tokens[0] === word;
}

/**
 * {@link tokenize} a piece at a time, so that a long text is never normalised
 * and matched in one go (issue #11): the text is cut just before a space
 * (U+0020) at most every `pieceLength` code units, which changes nothing,
 * as no token contains a space and NFKC and lower-casing never look across
 * one; a run without spaces stays whole.
 * @param pieceLength code units per piece before the cut, a positive integer.
 * @returns a generator of each piece's tokens, in text order (their concatenation equals `tokenize(text)`).
 */
export function* tokenizeInPieces(text: string, pieceLength: number): Generator<string[], void, undefined> {
  let start = 0;
  while (text.length - start > pieceLength) {
    let cut = text.lastIndexOf(' ', start + pieceLength);
    if (cut <= start) cut = text.indexOf(' ', start + pieceLength);
    if (cut < 0) break;
    yield tokenize(text.slice(start, cut));
    start = cut;
  }
  yield tokenize(text.slice(start));
}
