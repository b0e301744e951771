import { MAX_LEXICAL_POSTINGS } from './lexical-terms.js';

/** How long a word found in more than `MAX_LEXICAL_POSTINGS` rows is taken as too common without counting it again, in milliseconds. */
export const COMMON_TERM_TTL_MS = 60_000;

/** Most words a {@link CommonTerms} remembers; the least recently used go first. */
export const COMMON_TERMS_MAX = 10_000;

/**
 * Words of one lexical index known to match more than `MAX_LEXICAL_POSTINGS`
 * rows. `selectiveTerms` never keeps such a word, and counting its rows is
 * the most expensive part of choosing (each count reads that many
 * postings), so an index counts only the words not remembered here. A word
 * stays remembered for {@link COMMON_TERM_TTL_MS}: rows only ever make a word
 * more common, except deletions, after which a word may be left out that
 * long after it became selective again.
 */
export interface CommonTerms {
  /**
   * Match counts of `terms` for `selectiveTerms`: `count` is called once with
   * the words not remembered (in their order; not called when there are
   * none) and must return their counts, counted up to at least
   * `MAX_LEXICAL_POSTINGS + 1`; remembered words count as
   * `MAX_LEXICAL_POSTINGS + 1`. Words counted above the limit are remembered.
   * @returns counts in the order of `terms`.
   */
  counts(terms: readonly string[], count: (unknown: string[]) => readonly number[]): number[];
  /** As {@link counts}, with an asynchronous `count`. */
  countsAsync(terms: readonly string[], count: (unknown: string[]) => Promise<readonly number[]>): Promise<number[]>;
}

/**
 * A {@link CommonTerms} held in memory (one per index object).
 * @param now clock in milliseconds (default `Date.now`).
 */
export function createCommonTerms(now: () => number = Date.now): CommonTerms {
  const expiry = new Map<string, number>();
  const common = (term: string, at: number): boolean => {
    const until = expiry.get(term);
    if (until === undefined) return false;
    expiry.delete(term);
    if (until <= at) return false;
    expiry.set(term, until);
    return true;
  };
  const remember = (term: string, at: number): void => {
    expiry.delete(term);
    expiry.set(term, at + COMMON_TERM_TTL_MS);
    if (expiry.size > COMMON_TERMS_MAX) expiry.delete(expiry.keys().next().value as string);
  };
  const split = (terms: readonly string[]) => {
    const at = now();
    const known = terms.map((term) => common(term, at));
    return { at, known, unknown: terms.filter((_, i) => !known[i]) };
  };
  const merge = (terms: readonly string[], at: number, known: boolean[], unknown: string[], counted: readonly number[]) => {
    unknown.forEach((term, i) => {
      if ((counted[i] ?? 0) > MAX_LEXICAL_POSTINGS) remember(term, at);
    });
    let next = 0;
    return terms.map((_, i) => (known[i] ? MAX_LEXICAL_POSTINGS + 1 : (counted[next++] ?? 0)));
  };
  return {
    counts(terms, count) {
      const { at, known, unknown } = split(terms);
      return merge(terms, at, known, unknown, unknown.length === 0 ? [] : count(unknown));
    },
    async countsAsync(terms, count) {
      const { at, known, unknown } = split(terms);
      return merge(terms, at, known, unknown, unknown.length === 0 ? [] : await count(unknown));
    },
  };
}
