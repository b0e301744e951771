/**
 * Reading the postbox's `x-agentinfra-injection` and
 * `x-agentinfra-injection-evidence` headers (see module-postbox
 * `scoring/injection-headers.ts`) for the "Why quarantined" panel. Only
 * parsing: the result is rendered as text, never as HTML.
 */

/** Header naming the scorer, the score and the fired signals. */
export const INJECTION_HEADER = 'x-agentinfra-injection';
/** Header with the sentences that scored highest and their weights (sender text). */
export const INJECTION_EVIDENCE_HEADER = 'x-agentinfra-injection-evidence';

/** Default of the `postbox_quarantine_threshold` setting. */
export const DEFAULT_QUARANTINE_THRESHOLD = 0.5;

/**
 * Short descriptions of the local scorer's signals (module-postbox
 * `scoring/injection-features.ts` FEATURE_NAMES). A name not listed here is
 * shown as it is.
 */
export const SIGNAL_DESCRIPTIONS: Readonly<Record<string, string>> = {
  override: 'Tells the reader to ignore or replace earlier instructions',
  model_address: 'Talks to an AI model or asks it to take on a new role',
  role_marker: 'Contains chat-prompt markers such as “system:” or [INST]',
  output_direction: 'Dictates how the assistant must word its reply',
  task_opening: 'Sentences open with a task for the reader (“Write…”, “Translate…”)',
  question: 'Asks the reader questions',
  first_person_request: 'The sender asks for something for themselves (“help me”, “I want you to”)',
  transformation: 'Asks for encodings or text tricks (Base64, ciphers, reversed text)',
  tool_or_exfiltration: 'Asks to run commands or send secrets, keys or mail elsewhere',
  lure: 'Uses lure or scam wording (prizes, “click here”, account suspended)',
  delegated_authority: 'Claims the user approved it or says not to tell the user',
  hidden_instructions: 'Instructions in text hidden from a human reader (hidden HTML, comments, encoded text)',
  invisible_chars: 'Contains invisible (zero-width or bidi control) characters',
  tag_chars: 'Contains invisible Unicode tag characters',
  hidden_elements: 'HTML elements hidden from a human reader (display:none, zero size, invisible text)',
  text_comments: 'Sentences inside HTML comments',
  encoded_texts: 'Contains encoded text (Base64 or hex) that decodes to words',
  mismatched_links: 'Links whose text shows a different address than they go to',
  trick_links: 'Trick links (to an IP address, with a user name before the host, punycode, or javascript:/data: URLs)',
  markdown_exfil: 'A Markdown image whose URL carries a query (a way to leak data when rendered)',
  instruction_share: 'Most sentences read as instructions',
};

/** A signal with its description (the name itself when unknown). */
export interface ExplainedSignal {
  name: string;
  description: string;
  known: boolean;
}

/** One evidence sentence (lower-cased sender text) and what it added to the score's logit. */
export interface Evidence {
  text: string;
  weight: number;
}

/** What the injection headers say about a message. */
export interface InjectionExplanation {
  scorer: string | null;
  /** The score in the header (the stored score is the message's `injection_score`). */
  score: number | null;
  /** The local model's score when a remote scorer answered. */
  local: number | null;
  /** The remote scorer that failed, when the local score replaced its answer. */
  fallback: string | null;
  signals: ExplainedSignal[];
  evidence: Evidence[];
}

const number = (value: string | undefined): number | null => {
  if (value === undefined || value.trim() === '') return null;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : null;
};

/** `scorer=…; score=…; signals=a,b` as name/value pairs (the scorer id may itself hold `:` but not `;`). */
function parseParts(value: string): Map<string, string> {
  const parts = new Map<string, string>();
  for (const part of value.split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    parts.set(part.slice(0, at).trim().toLowerCase(), part.slice(at + 1).trim());
  }
  return parts;
}

/** The signals of a `signals=` value, described. */
export function explainSignals(list: string | undefined): ExplainedSignal[] {
  if (!list || list === 'none') return [];
  return list
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
    .map((name) => {
      const description = Object.hasOwn(SIGNAL_DESCRIPTIONS, name) ? SIGNAL_DESCRIPTIONS[name] : undefined;
      return { name, description: description ?? name, known: description !== undefined };
    });
}

/** `"sentence" +3.12; "other" -0.40` as sentences with weights (the header's quotes never occur inside a sentence). */
export function parseEvidence(value: string | undefined): Evidence[] {
  if (!value) return [];
  const evidence: Evidence[] = [];
  for (const match of value.matchAll(/"([^"]*)"\s*([+-]?\d+(?:\.\d+)?)/g)) {
    evidence.push({ text: match[1] as string, weight: Number(match[2]) });
  }
  return evidence;
}

/** The explanation in a message's headers, or `null` when the postbox added none. */
export function explainInjection(headers: Record<string, string> | undefined): InjectionExplanation | null {
  const value = headers?.[INJECTION_HEADER];
  if (!value) return null;
  const parts = parseParts(value);
  return {
    scorer: parts.get('scorer') ?? null,
    score: number(parts.get('score')),
    local: number(parts.get('local')),
    fallback: parts.get('fallback') ?? null,
    signals: explainSignals(parts.get('signals')),
    evidence: parseEvidence(headers?.[INJECTION_EVIDENCE_HEADER]),
  };
}
