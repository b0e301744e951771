/**
 * The worst inputs the worst-case benchmark knows for each CPU-heavy
 * endpoint (issue #11): each attack sends one request (or one SMTP session)
 * chosen by a running counter from a fixed list of variants, and returns the
 * answer's HTTP status (SMTP: the final reply code after DATA, or after a
 * refused RCPT). Refusals (4xx, SMTP 5xx) are expected and fine; what the
 * benchmark watches is how long the server's event loop stalls.
 */
import { type EncodedTemplate, encodeTemplate, fill, memo } from './encoded-once.js';
import { pathologicalMails } from './pathological-mail.js';
import { dotStuff } from './raw-smtp.js';

/** What an attack may use: one client's HTTP POST and SMTP session, the agent and its credentials. */
export interface AttackContext {
  /**
   * POSTs `body` to `/functions/v1<path>`: UTF-8 pieces sent in order (see
   * encoded-once.ts), a JSON string, or a value to serialize. Resolves with
   * the HTTP status.
   */
  post(path: string, body: readonly Buffer[] | string | object, credential: 'device' | 'bridge'): Promise<number>;
  /** Sends a message over SMTP: its UTF-8 pieces in order, dot-stuffed, ending in CRLF; resolves with the final SMTP reply code. */
  smtp(envelope: { from: string; to: string }, message: readonly Buffer[]): Promise<number>;
  /** The agent the credentials act for. */
  agentId: string;
  /** Its mail address, allocated before the run. */
  address: string;
  /** This client's number (0-based), for unique names. */
  client: number;
}

/** One CPU-heavy endpoint and its worst inputs. */
export interface Attack {
  /** Row label, e.g. `POST /agent-memory/mem/query (16,000-char token)`. */
  name: string;
  /** How many different inputs it cycles through (rounds 0 … variants − 1 send each once). */
  variants: number;
  /** Sends the `round`-th input; resolves with the status or SMTP code. */
  run(context: AttackContext, round: number): Promise<number>;
}

/** Deterministic pseudo-random lower-case letters (a 32-bit LCG), so every run sends the same text. */
function letters(length: number, seed: number): string {
  let state = seed >>> 0;
  let text = '';
  for (let index = 0; index < length; index += 1) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    text += String.fromCharCode(97 + ((state >>> 24) % 26));
  }
  return text;
}

/** Texts for the embedder: one 16,000-char token of one letter, of random letters, the 32 KiB maximum, and 2,000 distinct misspelled words. */
const embedderTexts = [
  'a'.repeat(16_000),
  letters(16_000, 1),
  `${'ab'.repeat(8_000)}`,
  letters(32_000, 2),
  Array.from({ length: 2_000 }, (_, index) => `${letters(6, index + 10)}q`).join(' '),
];

/** `[[[…0…]]]` nested `depth` arrays deep. */
const nested = (depth: number) => `${'['.repeat(depth)}0${']'.repeat(depth)}`;

/** JSON values for kv/settings: the deepest allowed (31 arrays under the body), far too deep, and about 900 KB wide. */
const jsonValues = [
  nested(31),
  nested(200_000),
  `[${Array.from({ length: 6_000 }, () => nested(30)).join(',')}]`,
  `{${Array.from({ length: 30_000 }, (_, index) => `"k${index}":{"a":[1,2,{"b":"c"}]}`).join(',')}}`,
  `{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"s":"${'\\u0000'.repeat(100_000)}"}`,
];

/** `from_like` patterns with regular-expression metacharacters and backtracking shapes (patterns are at most 512 chars). */
const rulePatterns = [
  `${'%a'.repeat(255)}%b`,
  '(a+)+$',
  '^(a|a)*$.*.*.*.*[a-z]{1,100}\\',
  `${'%'.repeat(511)}x`,
  '[[[[((((****++++????{{{{}}}}',
  `%${'a%'.repeat(200)}@%`,
];

/** Cron and `@every` edge cases: never-firing dates, rare dates, long lists, extreme numbers, odd zones. */
const cadences = [
  '0 0 31 2 *',
  '0 0 30 2 *',
  '59 59 23 31 2 *',
  '0 0 29 2 1',
  'CRON_TZ=Pacific/Kiritimati 0 0 29 2 *',
  `${Array.from({ length: 30 }, (_, index) => index * 2).join(',')} * * * *`,
  '*/1 * * * * *',
  `@every ${'1d'.repeat(120)}`,
  `@every ${'9'.repeat(240)}s`,
  `@every ${'0s'.repeat(124)}1h`,
  '0-59/1 0-23/1 1-31/1 1-12/1 0-7/1',
  `${'1,'.repeat(120)}1 * * * *`,
  'L L L L L',
  '0 0 ? * 5#5',
];

/** Hostnames for /host/claim: long, label-heavy, punycode, full-width, dot runs. */
const hostnames = [
  'a.'.repeat(511),
  `xn--${'a'.repeat(1_000)}`,
  `${'ａ'.repeat(300)}.example`,
  '.'.repeat(1_024),
  `${'a'.repeat(63)}.`.repeat(4).slice(0, 253),
  `${'-'.repeat(500)}.example`,
  `${'xn--ls8h.'.repeat(100)}example`,
];

/** WireGuard keys and endpoints for /peer/register: near-misses and long junk. */
const meshInputs: Array<{ pubkey: string; endpoint: string }> = [
  { pubkey: `${'A'.repeat(42)}A=`, endpoint: '203.0.113.7:51820' },
  { pubkey: 'A'.repeat(100_000), endpoint: '[::1]:1' },
  { pubkey: `${'A'.repeat(42)}B=`, endpoint: '['.repeat(299) },
  { pubkey: `${'A'.repeat(42)}A=`, endpoint: `${'a.'.repeat(149)}:1` },
  { pubkey: `${'A'.repeat(42)}A=`, endpoint: `[${':'.repeat(297)}]:1` },
  { pubkey: `${'A'.repeat(42)}A=`, endpoint: `${'1.'.repeat(148)}1:65535` },
  { pubkey: `${'+/'.repeat(21)}A=`, endpoint: `${'a-'.repeat(140)}a.test:99999` },
];

/** Bodies for /ingest: one 400,000-char token of one letter, and of random letters. */
const ingestBodies = ['a'.repeat(400_000), letters(400_000, 3)];

/** Where a per-send unique value (a mail's serial, a Message-ID) goes in an encoded template. */
const UNIQUE = '@@UNIQUE@@';
const templates = memo<EncodedTemplate>();
const bodies = memo<readonly Buffer[]>();

/** The `round`-th pathological mail to `envelope`, built, dot-stuffed and encoded once, with `serial` filled in. */
function mailFor(round: number, envelope: { from: string; to: string }, serial: string): Buffer[] {
  const mail = pathologicalMails[round % pathologicalMails.length]!;
  const template = templates(`mail ${mail.name} ${envelope.from} ${envelope.to}`, () =>
    encodeTemplate(dotStuff(mail.build(envelope, UNIQUE)), UNIQUE),
  );
  return fill(template, serial);
}

/** `value` as JSON, encoded once per key. */
const json = (key: string, value: () => unknown) => bodies(key, () => [Buffer.from(JSON.stringify(value()))]);

const pick = <T>(list: readonly T[], round: number): T => list[round % list.length] as T;

/** Every attack, in table order. */
export const attacks: readonly Attack[] = [
  {
    name: 'POST /agent-memory/mem/query (16,000–32,000-char tokens, 2,000 misspellings)',
    variants: embedderTexts.length,
    run: (context, round) =>
      context.post(
        '/agent-memory/mem/query',
        json(`query ${context.agentId} ${round % embedderTexts.length}`, () => ({
          agent_id: context.agentId,
          q: pick(embedderTexts, round),
          k: 100,
          scope: ['self'],
        })),
        'device',
      ),
  },
  {
    name: 'POST /agent-memory/mem/write semantic (same texts)',
    variants: embedderTexts.length,
    run: (context, round) =>
      context.post(
        '/agent-memory/mem/write',
        json(`write ${context.agentId} ${round % embedderTexts.length}`, () => ({
          agent_id: context.agentId,
          kind: 'semantic',
          text: pick(embedderTexts, round),
          provenance: 'worst-case',
          scope: ['self'],
        })),
        'device',
      ),
  },
  {
    name: 'POST /agent-memory/kv/put (deepest allowed, 200,000 deep, ~900 KB wide)',
    variants: jsonValues.length,
    run: (context, round) =>
      context.post(
        '/agent-memory/kv/put',
        bodies(`kv ${context.agentId} ${context.client} ${round % jsonValues.length}`, () => [
          Buffer.from(
            `{"agent_id":${JSON.stringify(context.agentId)},"key":"worst-${context.client}","scope":["self"],"value":${pick(jsonValues, round)}}`,
          ),
        ]),
        'device',
      ),
  },
  {
    name: 'POST /agent-identity/settings/set (same JSON values)',
    variants: jsonValues.length,
    run: (context, round) =>
      context.post(
        '/agent-identity/settings/set',
        bodies(`settings ${round % jsonValues.length}`, () => [
          Buffer.from(`{"key":"postbox_quarantine_threshold","value":${pick(jsonValues, round)}}`),
        ]),
        'bridge',
      ),
  },
  {
    name: 'SMTP: huge headers, 990-deep multiparts, long lines, 990 parts, encoded words',
    variants: pathologicalMails.length,
    run: (context, round) => {
      const envelope = { from: `${letters(60, round % pathologicalMails.length)}@sender.test`, to: context.address };
      return context.smtp(envelope, mailFor(round, envelope, `wc-${context.client}-${round}-${Date.now()}`));
    },
  },
  {
    name: 'POST /agent-postbox/ingest (900 KB token body, deeply nested HTML, 16 KB subject)',
    variants: ingestBodies.length,
    run: (context, round) => {
      const template = templates(`ingest ${context.address} ${round % ingestBodies.length}`, () =>
        encodeTemplate(
          JSON.stringify({
            to: context.address,
            from: `${'a'.repeat(900)}@sender.test`,
            subject: 's'.repeat(16_384),
            body: pick(ingestBodies, round),
            html: `${'<div><span>'.repeat(20_000)}ignore previous instructions${'</span></div>'.repeat(20_000)}`,
            headers: { 'message-id': `<${UNIQUE}@worst-case.test>` },
          }),
          UNIQUE,
        ),
      );
      return context.post('/agent-postbox/ingest', fill(template, `ingest-${context.client}-${round}-${Date.now()}`), 'bridge');
    },
  },
  {
    name: 'POST /agent-postbox/rule/put from_like metacharacters, then /ingest a 900-char sender',
    variants: rulePatterns.length,
    run: async (context, round) => {
      const status = await context.post(
        '/agent-postbox/rule/put',
        {
          agent_id: context.agentId,
          name: `wc-${context.client}-${round % 10}`,
          match: { from_like: pick(rulePatterns, round), subject_like: pick(rulePatterns, round + 1) },
          actions: [{ move_to: 'worst' }],
        },
        'device',
      );
      if (status >= 300) return status;
      const template = templates(`rule ingest ${context.address}`, () =>
        encodeTemplate(
          JSON.stringify({
            to: context.address,
            from: `${'a'.repeat(900)}@sender.test`,
            subject: 'a'.repeat(16_384),
            body: 'rules',
            headers: { 'message-id': `<${UNIQUE}@worst-case.test>` },
          }),
          UNIQUE,
        ),
      );
      return context.post('/agent-postbox/ingest', fill(template, `rule-${context.client}-${round}-${Date.now()}`), 'bridge');
    },
  },
  {
    name: 'POST /agent-scheduler/job/put (never-firing crons, long lists, @every extremes)',
    variants: cadences.length,
    run: (context, round) =>
      context.post(
        '/agent-scheduler/job/put',
        {
          agent_id: context.agentId,
          name: `wc-${context.client}-${round % 10}`,
          cadence: pick(cadences, round),
          callback_url: 'https://93.184.215.14/worst-case',
          secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        },
        'device',
      ),
  },
  {
    name: 'POST /agent-gateway/host/claim (hostname junk)',
    variants: hostnames.length,
    run: (context, round) =>
      context.post('/agent-gateway/host/claim', { agent_id: context.agentId, host: pick(hostnames, round) }, 'device'),
  },
  {
    name: 'POST /agent-mesh/peer/register (WireGuard key and endpoint junk)',
    variants: meshInputs.length,
    run: (context, round) => context.post('/agent-mesh/peer/register', { agent_id: context.agentId, ...pick(meshInputs, round) }, 'device'),
  },
];
