import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { displayUrl, redactSecret } from './secret-redaction.js';

/** Body of an OpenAI `POST /v1/embeddings` answer (only the fields read; servers add others). */
const embeddingsResponseSchema = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative().optional(), embedding: z.array(z.number()) })),
});

/** How to reach an OpenAI-compatible embeddings endpoint. */
export interface EmbeddingsEndpoint {
  /** Full URL of the endpoint, e.g. `https://api.openai.com/v1/embeddings`. */
  url: URL;
  model: string;
  apiKey?: string;
  /** Sent as the request's `dimensions` field when set (OpenAI text-embedding-3 shortening). */
  requestDimensions?: number;
  /** Per request, in milliseconds. */
  timeoutMs: number;
  /** Extra attempts after HTTP 429, 502, 503, 504 or a network error. */
  maxRetries: number;
}

/** Statuses worth another attempt: rate limiting and a gateway or server that is (re)starting. */
const RETRIED_STATUSES = new Set([429, 502, 503, 504]);
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 10_000;
const ERROR_BODY_CHARS = 300;

/** An answer with an HTTP error status; its message quotes the (redacted) body. */
class EmbeddingsHttpError extends Error {
  constructor(
    readonly status: number,
    body: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(`HTTP ${status}${body === '' ? '' : `: ${body}`}`);
    this.name = 'EmbeddingsHttpError';
  }
}

/**
 * Sends one batch to the endpoint (`{ model, input, encoding_format: "float" }`)
 * and returns the raw vectors in input order. Retries 429/502/503/504 and
 * network errors with exponential back-off (honouring `Retry-After`).
 * @throws Error naming the endpoint and model, with the HTTP or network error as `cause`;
 *   the API key never appears in the message or the cause.
 */
export async function requestEmbeddings(endpoint: EmbeddingsEndpoint, input: readonly string[]): Promise<number[][]> {
  const where = `embedding request to ${displayUrl(endpoint.url)} (model "${endpoint.model}")`;
  let attempt = 0;
  for (;;) {
    try {
      return await attemptRequest(endpoint, input);
    } catch (error) {
      if (!isRetryable(error) || attempt >= endpoint.maxRetries) {
        throw new Error(`${where} failed: ${describe(error, endpoint)}`, { cause: error });
      }
      const suggested = error instanceof EmbeddingsHttpError ? error.retryAfterMs : undefined;
      await sleep(Math.min(MAX_BACKOFF_MS, suggested ?? FIRST_BACKOFF_MS * 2 ** attempt));
      attempt += 1;
    }
  }
}

async function attemptRequest(endpoint: EmbeddingsEndpoint, input: readonly string[]): Promise<number[][]> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (endpoint.apiKey !== undefined) headers.authorization = `Bearer ${endpoint.apiKey}`;
  const body: Record<string, unknown> = { model: endpoint.model, input, encoding_format: 'float' };
  if (endpoint.requestDimensions !== undefined) body.dimensions = endpoint.requestDimensions;
  const response = await fetch(endpoint.url, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(endpoint.timeoutMs),
  });
  const text = await response.text();
  if (!response.ok) {
    const quoted = redactSecret(text.slice(0, ERROR_BODY_CHARS).trim(), endpoint.apiKey);
    throw new EmbeddingsHttpError(response.status, quoted, retryAfterMs(response.headers.get('retry-after')));
  }
  const parsed = embeddingsResponseSchema.safeParse(safeJson(text));
  if (!parsed.success) throw new Error('the answer is not an OpenAI embeddings response ({ data: [{ index, embedding }] })');
  const { data } = parsed.data;
  if (data.length !== input.length) throw new Error(`the answer has ${data.length} embeddings for ${input.length} inputs`);
  const vectors: number[][] = new Array(input.length);
  data.forEach((item, position) => {
    vectors[item.index ?? position] = item.embedding;
  });
  if (vectors.some((vector) => vector === undefined)) throw new Error('the answer repeats or skips embedding indexes');
  return vectors;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** HTTP statuses in {@link RETRIED_STATUSES}, and network failures (undici's `TypeError: fetch failed`); never timeouts. */
function isRetryable(error: unknown): boolean {
  if (error instanceof EmbeddingsHttpError) return RETRIED_STATUSES.has(error.status);
  return error instanceof TypeError && error.message === 'fetch failed';
}

function isTimeout(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'TimeoutError';
}

function describe(error: unknown, endpoint: EmbeddingsEndpoint): string {
  if (isTimeout(error)) return `no answer within ${endpoint.timeoutMs} ms`;
  if (!(error instanceof Error)) return redactSecret(String(error), endpoint.apiKey);
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return redactSecret(`${error.message}${cause}`, endpoint.apiKey);
}
