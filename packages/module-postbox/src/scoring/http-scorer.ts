import { z } from 'zod';
import type { InjectionScorer, ScoringInput } from './injection-scorer.js';

const optionsSchema = z.object({
  url: z.url({ protocol: /^https?$/ }),
  token: z.string().min(1).optional(),
  timeoutMs: z.number().int().min(10).max(60_000).default(2_000),
  /** Characters of text sent at most (the start of the message is what a model sees first). */
  maxChars: z.number().int().min(1_000).max(2_000_000).default(100_000),
});

/** Options of {@link createHttpInjectionScorer}. */
export type HttpInjectionScorerOptions = z.input<typeof optionsSchema>;

const answerSchema = z.object({ score: z.number().min(0).max(1) });

/** The text a model server scores: subject, blank line, body. */
export function scoringText(input: ScoringInput): string {
  return `${input.subject}\n\n${input.text}`;
}

/**
 * An {@link InjectionScorer} backed by a model server the operator runs:
 * `POST <url>` with JSON `{ text, subject, body, html }` (`text` is subject
 * and body together, cut to `maxChars`), answered with `{ "score": <0..1> }`.
 * The URL is configured by the operator, so it is not subject to the
 * webhook SSRF guard.
 * @throws ZodError on invalid options. `score` throws Error (cause attached)
 *   on network errors, timeouts, non-2xx answers and malformed answers; the
 *   message names the scorer's origin only, never the token.
 */
export function createHttpInjectionScorer(options: HttpInjectionScorerOptions): InjectionScorer {
  const settings = optionsSchema.parse(options);
  const origin = new URL(settings.url).origin;
  return {
    id: `http:${origin}`,
    async score(input) {
      const cut = (value: string) => (value.length > settings.maxChars ? value.slice(0, settings.maxChars) : value);
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
      if (settings.token) headers.authorization = `Bearer ${settings.token}`;
      let response: Response;
      try {
        response = await fetch(settings.url, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            text: cut(scoringText(input)),
            subject: input.subject,
            body: cut(input.text),
            html: input.html ? cut(input.html) : null,
          }),
          signal: AbortSignal.timeout(settings.timeoutMs),
          redirect: 'error',
        });
      } catch (error) {
        throw new Error(`Injection scorer ${origin} did not answer: ${(error as Error).name}.`, { cause: error });
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`Injection scorer ${origin} answered HTTP ${response.status}.`);
      }
      let parsed: z.infer<typeof answerSchema>;
      try {
        parsed = answerSchema.parse(await response.json());
      } catch (error) {
        throw new Error(`Injection scorer ${origin} did not answer { "score": <0..1> }.`, { cause: error });
      }
      return parsed.score;
    },
  };
}
