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
