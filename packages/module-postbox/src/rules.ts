import { z } from 'zod';

/** A folder name: 1–64 characters of letters, digits, space and `_ . - /`, not starting or ending with a space. */
export const folderSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_./-](?:[A-Za-z0-9 _./-]*[A-Za-z0-9_./-])?$/, 'must be 1–64 letters, digits, spaces or _ . - /');

/** Folder of inbound mail no rule moved. */
export const INBOX = 'inbox';
/** Folder of outbound mail. */
export const SENT = 'sent';

const patternSchema = z.string().min(1).max(512);

/**
 * What a rule matches (every key given must match; `{}` matches every
 * message). Patterns are SQL-LIKE style: `%` stands for any run of
 * characters, everything else is literal (also `_`), case-insensitive, and
 * the whole value must match:
 * - `from_like`: the sender's address (`news@shop.test`: an addr-spec of `From`, never display-name
 *   text, see `senderAddress`);
 * - `to_like`: the recipient address the message was delivered to;
 * - `subject_like`: the subject.
 */
export const ruleMatchSchema = z.strictObject({
  from_like: patternSchema.optional(),
  to_like: patternSchema.optional(),
  subject_like: patternSchema.optional(),
});
export type RuleMatch = z.infer<typeof ruleMatchSchema>;

/**
 * One action, an object with exactly one key:
 * - `{ "move_to": "<folder>" }`: file the message in a folder (shown in /list, filterable);
 * - `{ "mark_read": true }`: store it as read;
 * - `{ "quarantine": true }`: quarantine it whatever its score;
 * - `{ "webhook": true }` or `{ "webhook": "<webhook_id>" }`: deliver this message's event
 *   (`message.received` or `message.quarantined`) to the agent's webhooks (or the one named)
 *   even when their `events` filter leaves that event out.
 */
export const ruleActionSchema = z.union([
  z.strictObject({ move_to: folderSchema }),
  z.strictObject({ mark_read: z.literal(true) }),
  z.strictObject({ quarantine: z.literal(true) }),
  z.strictObject({ webhook: z.union([z.literal(true), z.string().min(1).max(40)]) }),
]);
export type RuleAction = z.infer<typeof ruleActionSchema>;

/** A stored rule. */
export interface MailRule {
  name: string;
  match: RuleMatch;
  actions: RuleAction[];
}

/** What a message looks like to the rules. */
export interface RuleSubject {
  /** Sender's bare address, lower-case. */
  from: string;
  /** Recipient address, lower-case. */
  to: string;
  subject: string;
}

/** The combined effect of the rules that matched. */
export interface RuleOutcome {
  /** Folder of the last `move_to` that applied, or `null`. */
  folder: string | null;
  markRead: boolean;
  quarantine: boolean;
  /** `true`: every webhook of the agent; a set: those webhook ids. */
  forceWebhooks: true | Set<string>;
  /** Names of the rules that matched, in the order they ran. */
  matched: string[];
}

/**
 * Whether `value` matches a `%` pattern (see {@link ruleMatchSchema}): `%`
 * stands for any run of characters, everything else is literal, the whole
 * value must match, and both sides are compared lower-cased.
 *
 * Linear work (issue #11; no regular expression is built from the pattern,
 * whose `%a%a%…%b` forms backtracked for seconds on a long subject): the
 * literal between the first and the last `%` are found left to right, each
 * at its first occurrence after the previous one, which is the match if there
 * is any; each search starts where the previous one ended.
 */
export function matchesLike(pattern: string, value: string): boolean {
  const parts = pattern.toLowerCase().split('%');
  const text = value.toLowerCase();
  const first = parts[0] ?? '';
  if (parts.length === 1) return text === first;
  const last = parts[parts.length - 1] ?? '';
  const end = text.length - last.length;
  if (end < first.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  for (let index = 1; index < parts.length - 1; index += 1) {
    const part = parts[index] ?? '';
    if (part === '') continue;
    const found = text.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/** Whether every pattern of `match` matches the message. */
export function ruleMatches(match: RuleMatch, message: RuleSubject): boolean {
  if (match.from_like !== undefined && !matchesLike(match.from_like, message.from)) return false;
  if (match.to_like !== undefined && !matchesLike(match.to_like, message.to)) return false;
  if (match.subject_like !== undefined && !matchesLike(match.subject_like, message.subject)) return false;
  return true;
}

/**
 * Runs `rules` in name order (code-point order of `name`) over a message
 * and combines their actions: later `move_to` wins, the other actions add up.
 */
export function applyRules(rules: readonly MailRule[], message: RuleSubject): RuleOutcome {
  const outcome: RuleOutcome = { folder: null, markRead: false, quarantine: false, forceWebhooks: new Set(), matched: [] };
  const ordered = [...rules].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const rule of ordered) {
    if (!ruleMatches(rule.match, message)) continue;
    outcome.matched.push(rule.name);
    for (const action of rule.actions) {
      if ('move_to' in action) outcome.folder = action.move_to;
      else if ('mark_read' in action) outcome.markRead = true;
      else if ('quarantine' in action) outcome.quarantine = true;
      else if (action.webhook === true) outcome.forceWebhooks = true;
      else if (outcome.forceWebhooks !== true) outcome.forceWebhooks.add(action.webhook);
    }
  }
  return outcome;
}
