import type { ScoringInput } from './injection-scorer.js';

/**
 * Characters of the text and of the HTML body handed to an injection scorer
 * (1 MiB is /ingest's default body limit; issue #11).
 */
const MAX_SCORED_CHARS = 1_048_576;
/** Characters of the subject handed to a scorer (the subject bound of /ingest). */
const MAX_SCORED_SUBJECT_CHARS = 16_384;

/** The first 1,048,576 characters of the text and of the HTML, and the subject's first 16,384. */
export function boundedScoringInput(message: ScoringInput): ScoringInput {
  return {
    subject: message.subject.slice(0, MAX_SCORED_SUBJECT_CHARS),
    text: message.text.slice(0, MAX_SCORED_CHARS),
    html: message.html === null ? null : message.html.slice(0, MAX_SCORED_CHARS),
  };
}
