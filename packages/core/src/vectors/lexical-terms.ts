/**
 * English stop words dropped from lexical queries: the Snowball list that
 * PostgreSQL's `english` configuration uses (`english.stop`), so both
 * engines see the same query words.
 */
const ENGLISH_STOP_WORDS = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its ' +
    'itself they them their theirs themselves what which who whom this that these those am is are was were be been being have ' +
    'has had having do does did doing a an the and but if or because as until while of at by for with about against between ' +
    'into through during before after above below to from up down in out on off over under again further then once here there ' +
    'when where why how all any both each few more most other some such no nor not only own same so than too very s t can ' +
    'will just don should now'
  ).split(' '),
);

/** Most words a lexical query keeps (the first ones): bounds the cost of a long `q`. */
export const MAX_LEXICAL_TERMS = 32;

/** Runs of letters, combining marks and digits: the words of a text. */
const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/**
 * The words a lexical query searches for: `text` after Unicode NFKC
 * normalisation and lower-casing, split into runs of letters, marks and
 * digits, without English stop words and repeats, at most
 * {@link MAX_LEXICAL_TERMS} (the first ones). Each word contains only
 * letters, marks and digits, so adapters may quote it in their query syntax
 * without escaping.
 * @example lexicalTerms("What is the user's GitHub handle?") → ['user', 'github', 'handle']
 */
export function lexicalTerms(text: string): string[] {
  const terms = new Set<string>();
  for (const word of text.normalize('NFKC').toLowerCase().match(WORD) ?? []) {
    if (ENGLISH_STOP_WORDS.has(word)) continue;
    terms.add(word);
    if (terms.size === MAX_LEXICAL_TERMS) break;
  }
  return [...terms];
}
