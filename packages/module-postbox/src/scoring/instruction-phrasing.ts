/**
 * Families of phrasing that prompt injections use, as regular expressions
 * over lower-cased text. Each family is counted separately and each match
 * is located: the local scorer uses them per sentence (a `cue` feature of
 * the sentence a match ends in, weights fitted on labelled mail, see
 * `segment-features.ts`), and in hidden text per message. None of them
 * alone decides: ordinary mail says "reply to this email" or "click here" too.
 */

import { type AnchorScanner, createAnchorScanner } from './anchor-scanner.js';
import {
  FOREIGN_MODEL_ADDRESS,
  FOREIGN_MODEL_ADDRESS_ANCHORS,
  FOREIGN_OUTPUT_DIRECTION,
  FOREIGN_OUTPUT_DIRECTION_ANCHORS,
  FOREIGN_OVERRIDE,
  FOREIGN_OVERRIDE_ANCHORS,
} from './foreign-phrasing.js';

/**
 * Where a family's expression can match, as a necessary condition on the
 * text: for at least one entry, each of its lists has a string that occurs
 * in the text, its white space read as one space (`anchor-scanner.ts`).
 * Each entry's strings are taken from the literal parts of the expression,
 * so every match holds one string of each list of some entry
 * (`instruction-phrasing.test.ts` checks this on generated matches).
 */
export type PhraseAnchors = readonly (readonly (readonly string[])[])[];

/** Every concatenation of one string from each part, in order: `product(['a', 'b'], [' x'])` is `['a x', 'b x']`. */
const product = (...parts: ReadonlyArray<readonly string[]>): string[] =>
  parts.reduce<string[]>((heads, part) => heads.flatMap((head) => part.map((tail) => head + tail)), ['']);

/** Override of earlier instructions ("ignore all previous instructions", "new instructions:", "from now on"), in English and the languages of `foreign-phrasing.ts`. */
const ENGLISH_OVERRIDE =
  /\b(?:ignore|disregard|forget|override|bypass|neglect|overlook|set aside)\b[^.!?\n]{0,60}?\b(?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails|programming|constraints|polic(?:y|ies)|system message)\b|\b(?:new|updated|revised|real|actual|true|hidden|secret|additional|important|urgent) (?:instructions?|directives?|orders)(?: for (?:the )?(?:ai|assistant|agent|model|bot))?\s*[:-]|\binstructions? (?:for|to) (?:the )?(?:ai|assistant|agent|model|bot)\b|\b(?:previous|prior|earlier|original) instructions? (?:are|is|were) (?:revoked|cancelled|void|obsolete)\b|\bfrom now on\b|\binstead,? (?:you (?:must|should|will)|please|just)\b|\bdo not (?:follow|obey|mention|reveal|inform|tell the user)\b|\bstop (?:what you are doing|summari[sz]ing|processing)\b/g;
const OVERRIDE = new RegExp(`${ENGLISH_OVERRIDE.source}|${FOREIGN_OVERRIDE}`, 'g');
const OVERRIDE_ANCHORS: PhraseAnchors = [
  [
    [
      ...['ignore', 'disregard', 'forget', 'override', 'bypass', 'neglect', 'overlook', 'set aside'],
      ...product(
        ['new', 'updated', 'revised', 'real', 'actual', 'true', 'hidden', 'secret', 'additional', 'important', 'urgent'],
        [' instruction', ' directive', ' orders'],
      ),
      ...product(['instruction', 'instructions'], [' for', ' to']),
      ...product(['previous', 'prior', 'earlier', 'original'], [' instruction']),
      'from now on',
      ...product(['instead'], ['', ','], [' you must', ' you should', ' you will', ' please', ' just']),
      ...product(['do not '], ['follow', 'obey', 'mention', 'reveal', 'inform', 'tell the user']),
      ...product(['stop '], ['what you are doing', 'summarizing', 'summarising', 'processing']),
      ...FOREIGN_OVERRIDE_ANCHORS,
    ],
  ],
];

/** Talking to the model, or asking it to change role ("you are now", "as an AI", "dear assistant", "system prompt"), in English and the languages of `foreign-phrasing.ts`. */
const ENGLISH_MODEL_ADDRESS =
  /\b(?:you are now|you're now|act as|pretend (?:to be|you are)|role-?play as|system prompt|developer mode|jailbreak|do anything now)\b|\bas an? (?:ai|assistant|language model|llm)\b|\b(?:dear|hey|hello|hi|attention|note to|message to|instructions? (?:for|to)) (?:the )?(?:ai|assistant|agent|llm|model|bot|chatbot|gpt)\b|\bif you are an? (?:ai|assistant|agent|llm|language model|bot|automated)\b|\b(?:ai|llm|language model|assistant|agent|bot) (?:reading|processing|summari[sz]ing|handling) (?:this|these)\b/g;
const MODEL_ADDRESS = new RegExp(`${ENGLISH_MODEL_ADDRESS.source}|${FOREIGN_MODEL_ADDRESS}`, 'g');
const MODEL_ADDRESS_ANCHORS: PhraseAnchors = [
  [
    [
      ...[
        'you are now',
        "you're now",
        'act as',
        'pretend to be',
        'pretend you are',
        'roleplay as',
        'role-play as',
        'system prompt',
        'developer mode',
        'jailbreak',
        'do anything now',
      ],
      ...product(['as a', 'as an'], [' ai', ' assistant', ' language model', ' llm']),
      ...product(
        [
          'dear',
          'hey',
          'hello',
          'hi',
          'attention',
          'note to',
          'message to',
          'instruction for',
          'instructions for',
          'instruction to',
          'instructions to',
        ],
        [' ', ' the '],
        ['ai', 'assistant', 'agent', 'llm', 'model', 'bot', 'chatbot', 'gpt'],
      ),
      'if you are a',
      ...product(['reading', 'processing', 'summarizing', 'summarising', 'handling'], [' th']),
      ...FOREIGN_MODEL_ADDRESS_ANCHORS,
    ],
  ],
];

/** Chat-template and prompt-structure markers ("system:", "[INST]", "<|im_start|>", "### Instruction", "end of email"). */
const ROLE_MARKER =
  /(?:^|\n)[ \t>*#-]*(?:system|assistant|developer|human)[ \t]*:[ \t]|\[\/?inst\]|<<\/?sys>>|<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>|<\/?(?:system|instructions?|prompt|assistant)>|###[ \t]*(?:instruction|system|response|new task)|\bbegin (?:system|admin|new) (?:prompt|instructions?|message)\b|\bend of (?:the )?(?:email|message|context|document|input)\b/g;
const ROLE_MARKER_ANCHORS: PhraseAnchors = [
  [
    [
      ...['system', 'assistant', 'developer', 'human', '[inst]', '[/inst]', '<<sys>>', '<</sys>>', '<|', 'instruction', 'prompt>', '###'],
      ...product(['begin '], ['system ', 'admin ', 'new ']),
      ...product(['end of '], ['', 'the '], ['email', 'message', 'context', 'document', 'input']),
    ],
  ],
];

/** Directions about the model's own output ("in your response", "reply in French", "your answer should"), in English and the languages of `foreign-phrasing.ts`. */
const ENGLISH_OUTPUT_DIRECTION =
  /\b(?:in|into|to|within|throughout|for|of|on) your (?:response|reply|answer|output|summary|translation)\b|\b(?:respond|reply|answer)(?: only)? (?:in|using|with) (?:base|emoji|reverse|french|spanish|german|italian|portuguese|russian|japanese|chinese|all caps|uppercase|lowercase|a |an |the following)|\byour (?:response|reply|answer|output)s? (?:should|must|needs? to|has to|will)\b|\b(?:encode|encrypt|reverse|render|express|write|provide|translate) (?:your|the) (?:response|reply|answer|output|message)\b/g;
const OUTPUT_DIRECTION = new RegExp(`${ENGLISH_OUTPUT_DIRECTION.source}|${FOREIGN_OUTPUT_DIRECTION}`, 'g');
const OUTPUT_DIRECTION_ANCHORS: PhraseAnchors = [
  [
    [
      ...product(['your '], ['response', 'reply', 'answer', 'output', 'summary', 'translation']),
      ...product(['respond', 'reply', 'answer'], ['', ' only'], [' in ', ' using ', ' with ']),
      ...product(
        ['encode', 'encrypt', 'reverse', 'render', 'express', 'write', 'provide', 'translate'],
        [' your ', ' the '],
        ['response', 'reply', 'answer', 'output', 'message'],
      ),
      ...FOREIGN_OUTPUT_DIRECTION_ANCHORS,
    ],
  ],
];

/**
 * A sentence that opens with a task verb, as prompts do ("Write a poem…", "Explain…", "Translate…").
 * After a line break only spaces and tabs are skipped (`\n[^\S\n]*`, not `\n\s*`): from every line break of
 * a run of them, `\s*` would read the rest of the run again, 17 s for 100,000 line breaks; the match still
 * starts at the last line break before the verb and ends where it did.
 */
const TASK_OPENING =
  /(?:^|[.!?:;]\s+|\n[^\S\n]*)(?:please\s+|kindly\s+|now\s+|also\s+|then\s+)?(?:write|explain|describe|translate|summari[sz]e|compose|draft|generate|provide|list|recommend|suggest|analy[sz]e|determine|classify|encode|encrypt|decode|decrypt|reverse|convert|replace|substitute|render|shift|apply|create|develop|outline|compare|calculate|solve|define|integrate|include|add|modify|enhance|augment|mention|promote|insert|append|prepend|tell|give|show|help|break down|express|spell|rewrite|rephrase|imagine|discuss|elaborate|identify|evaluate|predict)\b/g;
const TASK_OPENING_ANCHORS: PhraseAnchors = [
  [
    [
      ...['write', 'explain', 'describe', 'translate', 'summarize', 'summarise', 'compose', 'draft', 'generate', 'provide', 'list'],
      ...['recommend', 'suggest', 'analyze', 'analyse', 'determine', 'classify', 'encode', 'encrypt', 'decode', 'decrypt', 'reverse'],
      ...['convert', 'replace', 'substitute', 'render', 'shift', 'apply', 'create', 'develop', 'outline', 'compare', 'calculate'],
      ...['solve', 'define', 'integrate', 'include', 'add', 'modify', 'enhance', 'augment', 'mention', 'promote', 'insert', 'append'],
      ...['prepend', 'tell', 'give', 'show', 'help', 'break down', 'express', 'spell', 'rewrite', 'rephrase', 'imagine', 'discuss'],
      ...['elaborate', 'identify', 'evaluate', 'predict'],
    ],
  ],
];

/** A question sentence (wh-word or "can you …"). */
const QUESTION =
  /(?:^|[.!?]\s+|\n[^\S\n]*)(?:what|who|whom|how|why|which|where|can you|could you|would you|will you|is there|are there|do you know)\b[^.!?\n]{3,200}\?/g;
const QUESTION_ANCHORS: PhraseAnchors = [
  [
    [
      'what',
      'who',
      'how',
      'why',
      'which',
      'where',
      'can you',
      'could you',
      'would you',
      'will you',
      'is there',
      'are there',
      'do you know',
    ],
    ['?'],
  ],
];

/** The sender asking for something for themselves ("how do I", "help me", "I want you to"). */
const FIRST_PERSON_REQUEST =
  /\bhow (?:do|can|should|would) i\b|\b(?:help|show|tell|teach|give) me\b|\bi (?:want|need) you to\b|\bcan you (?:show|tell|explain|help|give|recommend|suggest)\b/g;
const FIRST_PERSON_REQUEST_ANCHORS: PhraseAnchors = [
  [
    [
      ...product(['how '], ['do', 'can', 'should', 'would'], [' i']),
      ...product(['help', 'show', 'tell', 'teach', 'give'], [' me']),
      ...product(['i '], ['want', 'need'], [' you to']),
      ...product(['can you '], ['show', 'tell', 'explain', 'help', 'give', 'recommend', 'suggest']),
    ],
  ],
];

/** Encodings, ciphers and text transformations ("Base64", "Caesar cipher", "reply in reverse", "emojis", "in Spanish"). */
const TRANSFORMATION =
  /\bbase ?(?:64|32|16|58)\b|\bcaesar\b|\bciphers?\b|\brot ?13\b|\bemojis?\b|\b(?:reverse|backwards?|inverted?) (?:order|sequence|text|character|your)\b|\b(?:reply|respond|write) (?:in reverse|backwards?)\b|\banagrams?\b|\bmisspell|\bleetspeak\b|\balphanumeric\b|\bhomophonic\b|\bvowels?\b|\bsubstitut(?:e|ion) (?:letters?|words?|cipher)|\bpig latin\b|\bmorse code\b|\b(?:in|into|to) (?:french|spanish|german|italian|portuguese|russian|japanese|chinese|arabic|hindi|korean|dutch|mandarin)\b/g;
const TRANSFORMATION_ANCHORS: PhraseAnchors = [
  [
    [
      ...product(['base', 'base '], ['64', '32', '16', '58']),
      ...['caesar', 'cipher', 'rot13', 'rot 13', 'emoji', 'anagram', 'misspell', 'leetspeak', 'alphanumeric', 'homophonic', 'vowel'],
      ...product(['reverse', 'backward', 'backwards', 'inverte', 'inverted'], [' order', ' sequence', ' text', ' character', ' your']),
      ...product(['reply', 'respond', 'write'], [' in reverse', ' backward']),
      ...product(['substitute', 'substitution'], [' letter', ' word', ' cipher']),
      ...['pig latin', 'morse code'],
      ...product(
        ['in ', 'to '],
        [
          'french',
          'spanish',
          'german',
          'italian',
          'portuguese',
          'russian',
          'japanese',
          'chinese',
          'arabic',
          'hindi',
          'korean',
          'dutch',
          'mandarin',
        ],
      ),
    ],
  ],
];

/** Tool use, commands and data exfiltration ("run the following command", "curl … | sh", "send all emails to", "API key"). */
const TOOL_OR_EXFILTRATION =
  /\b(?:execute|run|invoke|call|use)\b[^.!?\n]{0,30}\b(?:command|script|tool|function|shell|terminal)\b|\b(?:curl|wget)\s+\S|\|\s*(?:ba|z)?sh\b|\brm -rf\b|\bpowershell\b|\bsudo\s|\bchmod\s|\beval\(|\b(?:send|forward|upload|post|share|transfer|exfiltrate|leak|copy)\b[^.!?\n]{0,40}\b(?:all|every|the|your|these|those|any)\b[^.!?\n]{0,30}\b(?:emails?|messages|inbox|files|documents|credentials|passwords?|api keys?|tokens?|secrets?|contacts|conversations?|history)\b[^.!?\n]{0,40}\bto\b|\b(?:api[_ -]?keys?|access tokens?|private keys?|seed phrase|ssh keys?|bank details|card numbers?|social security)\b|\b(?:tool_call|function_call|tool_use)\b/g;
const TOOL_OR_EXFILTRATION_ANCHORS: PhraseAnchors = [
  [
    [
      ...[
        'command',
        'script',
        'tool',
        'function',
        'shell',
        'terminal',
        'curl',
        'wget',
        '|',
        'rm -rf',
        'powershell',
        'sudo',
        'chmod',
        'eval(',
      ],
      ...[
        'apikey',
        'api_key',
        'api-key',
        'api key',
        'access token',
        'private key',
        'seed phrase',
        'ssh key',
        'bank details',
        'card number',
        'social security',
      ],
    ],
  ],
  [
    ['send', 'forward', 'upload', 'post', 'share', 'transfer', 'exfiltrate', 'leak', 'copy'],
    [
      'email',
      'messages',
      'inbox',
      'files',
      'documents',
      'credentials',
      'password',
      'api key',
      'token',
      'secret',
      'contacts',
      'conversation',
      'history',
    ],
  ],
];

/** Lures: clickbait, prizes, malware and scam wording. */
const LURE =
  /\bclick (?:here|this link|the link|below|now)\b|\bdownload (?:now|this|the (?:attached|file|app))\b|\bclaim your\b|\byou(?:'ve| have) (?:won|been selected)\b|\blottery\b|\bprize\b|\bwinnings?\b|\bact now\b|\bwire (?:transfer|money)\b|\bgift cards?\b|\bbitcoin\b|\bcrypto(?:currency)? wallet\b|\bverify your (?:account|identity)\b|\baccount (?:will be )?(?:suspended|locked|closed)\b|\binstall (?:this|the) (?:app|software|update|extension)\b|\btoo good to be true\b|\bfree money\b|\bdouble your\b|\bfake\b|\bvirus\b|\bmalware\b/g;
const LURE_ANCHORS: PhraseAnchors = [
  [
    [
      ...product(['click '], ['here', 'this link', 'the link', 'below', 'now']),
      ...product(['download '], ['now', 'this', 'the attached', 'the file', 'the app']),
      ...product(["you've ", 'you have '], ['won', 'been selected']),
      ...[
        'claim your',
        'lottery',
        'prize',
        'winning',
        'act now',
        'wire transfer',
        'wire money',
        'gift card',
        'bitcoin',
        'crypto wallet',
        'cryptocurrency wallet',
      ],
      ...product(['verify your '], ['account', 'identity']),
      ...product(['account '], ['', 'will be '], ['suspended', 'locked', 'closed']),
      ...product(['install '], ['this ', 'the '], ['app', 'software', 'update', 'extension']),
      ...['too good to be true', 'free money', 'double your', 'fake', 'virus', 'malware'],
    ],
  ],
];

/** Claims of authority handed to the model, and pressure to skip the user ("the user has approved", "you are authorised to", "without asking them"). */
const DELEGATED_AUTHORITY =
  /\b(?:the|your) (?:user|account owner|owner) (?:has|have|had) (?:already )?(?:approved|authori[sz]ed|granted|allowed|agreed)\b|\b(?:the|your) user (?:wants|would want|asked) you to\b|\byou(?: are|'re) (?:authori[sz]ed|permitted|allowed|cleared) to\b|\bon (?:the user's|their|your user's|the owner's) behalf\b|\bas (?:their|the user's|your user's|his|her) (?:ai |e-?mail |mail )?(?:assistant|agent)\b|\byou,? (?:the|their|as the) (?:ai |mail )?(?:assistant|agent)\b|\b(?:all|every|any) (?:ai |mail |e-?mail )(?:assistants?|agents?)\b|\bwithout (?:asking|telling|informing|checking with) (?:the user|them|anyone|the owner)\b|\b(?:do not|don't|never) (?:tell|inform|alert|notify) (?:the user|anyone|them)\b|\bno need to (?:ask|check with|confirm with|tell) (?:me|them|the user)\b|\b(?:speed|urgency) matters more than\b/g;
const DELEGATED_AUTHORITY_ANCHORS: PhraseAnchors = [
  [
    [
      ...product(['user', 'owner'], [' has ', ' have ', ' had ']),
      ...product(['user '], ['wants', 'would want', 'asked'], [' you to']),
      ...product(['you are ', "you're "], ['authorized', 'authorised', 'permitted', 'allowed', 'cleared'], [' to']),
      ...product(['on '], ["the user's", 'their', "your user's", "the owner's"], [' behalf']),
      ...product(
        ['as '],
        ['their ', "the user's ", "your user's ", 'his ', 'her '],
        ['', 'ai ', 'email ', 'e-mail ', 'mail '],
        ['assistant', 'agent'],
      ),
      ...product(['you', 'you,'], [' the ', ' their ', ' as the '], ['', 'ai ', 'mail '], ['assistant', 'agent']),
      ...product(['all', 'every', 'any'], [' ai ', ' mail ', ' email ', ' e-mail '], ['assistant', 'agent']),
      ...product(['without '], ['asking', 'telling', 'informing', 'checking with']),
      ...product(['do not ', "don't ", 'never '], ['tell', 'inform', 'alert', 'notify']),
      ...product(['no need to '], ['ask', 'check with', 'confirm with', 'tell']),
      'matters more than',
    ],
  ],
];

/** Each family with the name of its feature, its expression and its {@link PhraseAnchors}. */
export const PHRASE_FAMILIES = [
  ['override', OVERRIDE, OVERRIDE_ANCHORS],
  ['model_address', MODEL_ADDRESS, MODEL_ADDRESS_ANCHORS],
  ['role_marker', ROLE_MARKER, ROLE_MARKER_ANCHORS],
  ['output_direction', OUTPUT_DIRECTION, OUTPUT_DIRECTION_ANCHORS],
  ['task_opening', TASK_OPENING, TASK_OPENING_ANCHORS],
  ['question', QUESTION, QUESTION_ANCHORS],
  ['first_person_request', FIRST_PERSON_REQUEST, FIRST_PERSON_REQUEST_ANCHORS],
  ['transformation', TRANSFORMATION, TRANSFORMATION_ANCHORS],
  ['tool_or_exfiltration', TOOL_OR_EXFILTRATION, TOOL_OR_EXFILTRATION_ANCHORS],
  ['lure', LURE, LURE_ANCHORS],
  ['delegated_authority', DELEGATED_AUTHORITY, DELEGATED_AUTHORITY_ANCHORS],
] as const;

/** Names of the phrase families, in {@link PHRASE_FAMILIES} order. */
export type PhraseFamily = (typeof PHRASE_FAMILIES)[number][0];

/** One phrase found: its family (index into {@link PHRASE_FAMILIES}) and the position of its last character. */
export interface PhraseMatch {
  family: number;
  at: number;
}

/** Matches of each family recorded at most (counts stop there too). */
export const MAX_MATCHES_PER_FAMILY = 200;

/** The anchor lists of all families, in order: the scanner reports list `k` as bit `k`. */
const ANCHOR_LISTS = PHRASE_FAMILIES.flatMap(([, , anchors]) => anchors.flat());
/** Per family, per entry of its anchors: the bits of the entry's lists. */
const FAMILY_ENTRY_MASKS: readonly (readonly number[])[] = (() => {
  let bit = 0;
  return PHRASE_FAMILIES.map(([, , anchors]) =>
    anchors.map((entry) => {
      const mask = ((1 << entry.length) - 1) << bit;
      bit += entry.length;
      return mask;
    }),
  );
})();
/** Built on first use (about 15 ms), so that a process that never scores mail does not pay for it. */
let scanAnchors: AnchorScanner | null = null;

/**
 * Occurrences of each phrase family in lower-cased `text` (counted up to
 * {@link MAX_MATCHES_PER_FAMILY}), and the matches sorted by position. One
 * pass for the families' anchor strings comes first: a family none of whose
 * anchor entries holds in `text` has no match, and its expression is not run.
 */
export function findPhrases(text: string): { counts: Record<PhraseFamily, number>; matches: PhraseMatch[] } {
  const counts = {} as Record<PhraseFamily, number>;
  const matches: PhraseMatch[] = [];
  scanAnchors ??= createAnchorScanner(ANCHOR_LISTS);
  const present = scanAnchors(text);
  PHRASE_FAMILIES.forEach(([name, pattern], family) => {
    counts[name] = 0;
    if (!(FAMILY_ENTRY_MASKS[family] ?? []).some((mask) => (present & mask) === mask)) return;
    pattern.lastIndex = 0;
    let count = 0;
    let match = pattern.exec(text);
    while (match !== null) {
      count += 1;
      matches.push({ family, at: match.index + Math.max(0, match[0].length - 1) });
      if (count >= MAX_MATCHES_PER_FAMILY) break;
      match = pattern.exec(text);
    }
    pattern.lastIndex = 0;
    counts[name] = count;
  });
  matches.sort((a, b) => a.at - b.at);
  return { counts, matches };
}

/** Families that are instructions to a model wherever they appear (used on hidden text). */
export const INSTRUCTION_FAMILIES: readonly PhraseFamily[] = [
  'override',
  'model_address',
  'role_marker',
  'output_direction',
  'task_opening',
  'transformation',
  'tool_or_exfiltration',
];
