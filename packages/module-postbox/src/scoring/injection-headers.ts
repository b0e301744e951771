import type { InjectionExplanation } from './local-scorer.js';

/**
 * Header the postbox adds to every inbound message: which scorer gave the
 * score and which hand-written signals fired, e.g.
 * `scorer=local-v6; score=0.9731; signals=hidden_instructions,hidden_elements`.
 * With a remote scorer: `scorer=http:https://scorer.internal; score=0.93;
 * local=0.41; signals=…` (signals and `local` always come from the local
 * model); when the remote scorer failed, `scorer=local-v6; fallback=http:…`.
 * Fixed vocabulary only, so it is kept on withheld (quarantined) messages.
 */
export const INJECTION_HEADER = 'x-agentinfra-injection';

/**
 * Header with the sentences whose n-grams scored highest, strongest first:
 * `"encode your response in base64" +3.12; "thanks for your order" +0.40`
 * (lower-cased, each cut to 80 characters). Text the sender wrote, so it is
 * withheld with the body of a quarantined message. Absent when no sentence
 * added at least 0.25 to the logit.
 */
export const INJECTION_EVIDENCE_HEADER = 'x-agentinfra-injection-evidence';

/** How the stored score came about. */
export interface ScoreProvenance {
  /** Id of the scorer whose score is stored. */
  scorerId: string;
  /** The stored score. */
  score: number;
  /** The local model's explanation (its score differs from `score` when a remote scorer answered). */
  local: InjectionExplanation;
  /** Id of the local scorer. */
  localScorerId: string;
  /** Id of the remote scorer that failed, when the local score replaced its answer. */
  fallbackFrom?: string;
}

/** Control characters and quotes are replaced so that the header stays one line and parseable. */
const quoted = (text: string) => `"${text.replace(/[\p{Cc}"\\]/gu, ' ')}"`;

/** The {@link INJECTION_HEADER} and (when there is evidence) {@link INJECTION_EVIDENCE_HEADER} values of one message. */
export function injectionHeaders(provenance: ScoreProvenance): Record<string, string> {
  const parts = [`scorer=${provenance.scorerId}`, `score=${provenance.score}`];
  if (provenance.fallbackFrom) parts.push(`fallback=${provenance.fallbackFrom}`);
  else if (provenance.scorerId !== provenance.localScorerId) parts.push(`local=${provenance.local.score}`);
  parts.push(`signals=${provenance.local.signals.length > 0 ? provenance.local.signals.join(',') : 'none'}`);
  const headers: Record<string, string> = { [INJECTION_HEADER]: parts.join('; ') };
  if (provenance.local.evidence.length > 0) {
    headers[INJECTION_EVIDENCE_HEADER] = provenance.local.evidence
      .map((item) => `${quoted(item.text)} ${item.weight >= 0 ? '+' : ''}${item.weight.toFixed(2)}`)
      .join('; ');
  }
  return headers;
}

/**
 * `headers` (lower-case names) without any copy of the injection headers a
 * sender or MTA supplied, so that only the postbox's own values are stored.
 */
export function withoutInjectionHeaders(headers: Record<string, string>): Record<string, string> {
  const copy = { ...headers };
  delete copy[INJECTION_HEADER];
  delete copy[INJECTION_EVIDENCE_HEADER];
  return copy;
}
