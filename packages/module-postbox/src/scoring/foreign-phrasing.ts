/**
 * Instruction-override, model-address and output-direction phrasing in Spanish, Portuguese,
 * French, Italian, German, Dutch and Polish, as regular-expression sources
 * over lower-cased, NFKC-normalised text. `instruction-phrasing.ts` joins
 * them to its English families, so an attack written in another language
 * fires the same `override`, `model_address` and `output_direction` signals and cues.
 */

/** "Instructions", "rules", "commands" in those languages. */
const INSTRUCTION_NOUNS =
  'instrucciones|instrucción|indicaciones|reglas|órdenes|instruções|instrução|regras|instructions|consignes|règles|istruzioni|regole|anweisungen|anweisung|instruktionen|vorgaben|regeln|befehle|instructies|regels|opdrachten|instrukcje|polecenia|zasady';

/** Imperatives of "ignore", "forget", "disregard" in those languages. */
const OVERRIDE_VERBS =
  'ignora|ignore|ignorez|ignores|olvida|olvide|olvidad|omite|descarta|desconsidere|esqueça|esqueca|oublie|oubliez|ignoriere|ignorieren sie|vergiss|vergessen sie|missachte|negeer|vergeet|zignoruj|zapomnij|dimentica|dimentichi|tralascia';

/** Override of earlier instructions: a verb of {@link OVERRIDE_VERBS} and, within 60 characters of the same sentence, a noun of {@link INSTRUCTION_NOUNS}. */
export const FOREIGN_OVERRIDE = `\\b(?:${OVERRIDE_VERBS})(?![a-zà-ÿ])[^.!?\\n]{0,60}?(?:${INSTRUCTION_NOUNS})`;

/** Strings of which every match of {@link FOREIGN_OVERRIDE} holds one (`instruction-phrasing.ts` skips the family's expression without them). */
export const FOREIGN_OVERRIDE_ANCHORS: readonly string[] = OVERRIDE_VERBS.split('|');

/** "Assistant" and "AI" in those languages. */
const ASSISTANT_NOUNS =
  "asistente|assistente|assistenten|assistentin|assistent|asystencie|asystenta|l'assistant|l’assistant|l'ia|l’ia|ki-assistenten|ki-assistent|ki|ia";

/** "To the", "for the", "note for" before one of {@link ASSISTANT_NOUNS}. */
const ADDRESS_PREFIXES =
  "al|para el|para o|ao|a la|pour|note pour|message pour|an den|an die|für den|für die|hinweis für den|aan de|voor de|per l'|per l’|all'|all’";

/**
 * Addressing the model: "Asistente:", "An den KI-Assistenten", "Note pour l'assistant", "Istruzioni per l'assistente".
 * A noun of {@link ASSISTANT_NOUNS} after one of {@link ADDRESS_PREFIXES}, or a non-English form followed by `:` or `,`.
 */
export const FOREIGN_MODEL_ADDRESS = `\\b(?:${ADDRESS_PREFIXES})\\s*(?:${ASSISTANT_NOUNS})(?![a-zà-ÿ])|\\b(?:asistente|assistente|assistent|asystencie|asystent|ki-assistent)\\s*[:,]`;

/**
 * Strings of which every match of {@link FOREIGN_MODEL_ADDRESS} holds one, with its white space read as
 * one space (`anchor-scanner.ts`): `sist` (every form of "assistant"), `syst` (the Polish ones), `l'ia`,
 * and the short nouns `ki` and `ia` with the prefix before them, as `ia` alone is in most mail.
 */
export const FOREIGN_MODEL_ADDRESS_ANCHORS: readonly string[] = [
  'sist',
  'syst',
  "l'ia",
  'l’ia',
  ...ADDRESS_PREFIXES.split('|').flatMap((prefix) => [`${prefix}ki`, `${prefix} ki`, `${prefix}ia`, `${prefix} ia`]),
];

/** "Your answer", "your summary" in those languages (informal and formal). */
const ANSWER_NOUNS =
  'respuesta|resumen|resposta|resumo|réponse|résumé|risposta|riassunto|antwort|zusammenfassung|antwoord|samenvatting|odpowiedzi|odpowiedź|podsumowaniu|podsumowanie';

/**
 * Directions about the model's output: "en tu respuesta", "in deiner Antwort", "dans ta réponse", "nella tua risposta",
 * and "before you summarise this e-mail" ("antes de resumir", "wenn du … zusammenfasst", "quand tu résumes").
 */
export const FOREIGN_OUTPUT_DIRECTION = `\\b(?:en|in|dans|na|nella|em|w|a|al|am|zu|de)\\s+(?:tu|su|sua|deine|deiner|ihrer|ihre|ta|votre|la tua|tua|la sua|je|jouw|uw|twojej|twoja|twoim)\\s+(?:${ANSWER_NOUNS})(?![a-zà-ÿ])|\\b(?:antes de resumir|antes de responder|wenn du [^.!?\\n]{0,40}zusammenfasst|bevor du [^.!?\\n]{0,40}(?:zusammenfasst|antwortest)|quand tu résumes|avant de résumer|lorsque tu résumes|prima di riassumere|quando riassumi|ao resumir|als je [^.!?\\n]{0,40}samenvat|voordat je [^.!?\\n]{0,40}samenvat|zanim podsumujesz)`;

/** Strings of which every match of {@link FOREIGN_OUTPUT_DIRECTION} holds one: the nouns, and the verbs of "before you summarise". */
export const FOREIGN_OUTPUT_DIRECTION_ANCHORS: readonly string[] = [
  ...ANSWER_NOUNS.split('|'),
  'antes de resumir',
  'antes de responder',
  'zusammenfasst',
  'antwortest',
  'quand tu résumes',
  'avant de résumer',
  'lorsque tu résumes',
  'prima di riassumere',
  'quando riassumi',
  'ao resumir',
  'samenvat',
  'zanim podsumujesz',
];
