/** What a scorer sees of one message. */
export interface ScoringInput {
  subject: string;
  /** The plain-text body (for HTML-only mail, the text mailparser derived from the HTML). */
  text: string;
  /** The HTML body as received, or `null`. Hidden parts of it are looked at too. */
  html: string | null;
}

/**
 * Scores how likely a message is a prompt injection aimed at the agent that
 * will read it (0 = ordinary mail, 1 = certainly an injection). Inbound mail
 * whose score is at or above the `postbox_quarantine_threshold` setting is
 * quarantined before any model reads it.
 *
 * Implementations: the built-in local scorer (`createLocalInjectionScorer`,
 * no network, no download) and `createHttpInjectionScorer` for a model server.
 */
export interface InjectionScorer {
  /** Stable name of the scorer and its version, e.g. `local-v1` or `http:https://scorer.internal`. */
  readonly id: string;
  /**
   * @returns a number in [0, 1].
   * @throws Error only for failures of a remote scorer (the caller falls back).
   */
  score(input: ScoringInput): Promise<number>;
}
