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

/**
 * Longest word (in UTF-16 code units) a lexical query searches for: no word
 * of any language is longer, and a 16,000-character "word" cost the
 * full-text engines tens of milliseconds to stem and look up (#11).
 */
export const MAX_LEXICAL_TERM_LENGTH = 64;

/**
 * Most postings (rows a word occurs in) a lexical query reads: its words are
 * taken rarest first while the rows they match, summed, stay within this, and
 * the rest are left out. A word found in thousands of rows weighs little in
 * BM25 but costs the most to rank: on 100,000 memories sharing their common
 * words, ranking every match took 165 ms per query, against 20 ms for the
 * whole vector leg (bench/memory-http.ts, #17).
 */
export const MAX_LEXICAL_POSTINGS = 2_000;

/**
 * Which of `terms` a query searches for, given how many rows each matches
 * (`matches[i]` for `terms[i]`, counted up to at least
 * {@link MAX_LEXICAL_POSTINGS} + 1): the rarest first, while their matches
 * summed stay within {@link MAX_LEXICAL_POSTINGS}; words matching nothing
 * are dropped. May be empty (every word too common): the lexical leg then
 * has no hits and the vector leg answers alone.
 */
export function selectiveTerms(terms: readonly string[], matches: readonly number[]): string[] {
  const counted = terms.map((term, index) => ({ term, n: matches[index] ?? 0 })).sort((a, b) => a.n - b.n);
  const kept: string[] = [];
  let total = 0;
  for (const { term, n } of counted) {
    if (n === 0) continue;
    if (total + n > MAX_LEXICAL_POSTINGS) break;
    kept.push(term);
    total += n;
  }
  return kept;
}

/** Runs of letters, combining marks and digits: the words of a text. */
const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/**
 * The words a lexical query searches for: `text` after Unicode NFKC
 * normalisation and lower-casing, split into runs of letters, marks and
 * digits, without English stop words, repeats and words longer than
 * {@link MAX_LEXICAL_TERM_LENGTH}, at most {@link MAX_LEXICAL_TERMS} (the
 * first ones). Each word contains only
 * letters, marks and digits, so adapters may quote it in their query syntax
 * without escaping.
 * @example lexicalTerms("What is the user's GitHub handle?") → ['user', 'github', 'handle']
 */
export function lexicalTerms(text: string): string[] {
  const terms = new Set<string>();
  for (const word of text.normalize('NFKC').toLowerCase().match(WORD) ?? []) {
    if (word.length > MAX_LEXICAL_TERM_LENGTH || ENGLISH_STOP_WORDS.has(word)) continue;
    terms.add(word);
    if (terms.size === MAX_LEXICAL_TERMS) break;
  }
  return [...terms];
}
