import type { Embedder } from '@agentinfra/core';
import { z } from 'zod';
import { type EmbeddingsEndpoint, requestEmbeddings } from './embeddings-endpoint.js';
import { displayUrl } from './secret-redaction.js';

/** Text embedded by {@link OpenAiEmbedder.verify} to learn or check the model's dimension. */
const PROBE_TEXT = 'agentinfra embedding probe';

const openAiEmbedderOptionsSchema = z
  .object({
    /**
     * Server root, e.g. `https://api.openai.com`, `http://127.0.0.1:11434` (Ollama),
     * `http://127.0.0.1:8000` (vLLM), `http://127.0.0.1:8080` (text-embeddings-inference).
     * Requests go to `{baseUrl}/v1/embeddings`; a `baseUrl` already ending in `/v1` is used as is.
     */
    baseUrl: z.url({ protocol: /^https?$/ }),
    /** Model name sent with each request. */
    model: z.string().min(1),
    /** Sent as `Authorization: Bearer <apiKey>`; never logged or put in errors. */
    apiKey: z.string().min(1).optional(),
    /** Expected vector length; checked against the server at start. Learned from the server when absent. */
    dimensions: z.number().int().positive().optional(),
    /** Also send `dimensions` in each request (OpenAI text-embedding-3 shortening). Needs `dimensions`. */
    requestDimensions: z.boolean().default(false),
    /** Texts per request. */
    batchSize: z.number().int().min(1).max(2048).default(64),
    /** Timeout of each request, in milliseconds. */
    timeoutMs: z.number().int().positive().default(30_000),
    /** Extra attempts after HTTP 429/502/503/504 or a network error, with exponential back-off. */
    maxRetries: z.number().int().min(0).max(10).default(2),
    /**
     * Texts are cut to this many characters before sending, so that a long memory
     * never exceeds the model's context (8,192 tokens for OpenAI's models).
     */
    maxInputChars: z.number().int().positive().default(8_000),
    /** Probe the server in the factory (default). `false` needs `dimensions` and defers all traffic to the first `embed`. */
    verify: z.boolean().default(true),
  })
  .strict()
  .refine((options) => options.verify || options.dimensions !== undefined, {
    message: 'dimensions is required when verify is false',
    path: ['dimensions'],
  })
  .refine((options) => !options.requestDimensions || options.dimensions !== undefined, {
    message: 'requestDimensions needs dimensions',
    path: ['requestDimensions'],
  });

/** Options of {@link createOpenAiEmbedder}. */
export type OpenAiEmbedderOptions = z.input<typeof openAiEmbedderOptionsSchema>;

/** An {@link Embedder} backed by an OpenAI-compatible server. */
export interface OpenAiEmbedder extends Embedder {
  /**
   * Embeds a probe text and checks the server's vector length against `dimensions`.
   * @throws Error when the server fails or returns vectors of another length.
   */
  verify(): Promise<void>;
}

/**
 * Creates an embedder that calls `POST {baseUrl}/v1/embeddings` (OpenAI's
 * embeddings API, also served by Ollama, vLLM and text-embeddings-inference)
 * with the global `fetch`. Texts go in batches of `batchSize`, cut to
 * `maxInputChars`, with lone surrogates replaced by U+FFFD; empty texts are not
 * sent and get the zero vector; returned vectors are L2-normalised to float32.
 * `id` is `openai:<model>@<dimensions>`.
 *
 * Unless `verify: false`, the factory embeds one probe text first, to learn
 * the dimension or to check the configured one.
 * @throws z.ZodError for invalid options; Error when the probe fails or the
 *   server's dimension differs from `dimensions` (the message says which to configure).
 */
export async function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Promise<OpenAiEmbedder> {
  const settings = openAiEmbedderOptionsSchema.parse(options);
  const root = settings.baseUrl.replace(/\/+$/, '');
  const endpoint: EmbeddingsEndpoint = {
    url: new URL(root.endsWith('/v1') ? `${root}/embeddings` : `${root}/v1/embeddings`),
    model: settings.model,
    apiKey: settings.apiKey,
    requestDimensions: settings.requestDimensions ? settings.dimensions : undefined,
    timeoutMs: settings.timeoutMs,
    maxRetries: settings.maxRetries,
  };

  async function embedBatch(texts: readonly string[], expected: number | undefined): Promise<Float32Array[]> {
    const raw = await requestEmbeddings(
      endpoint,
      texts.map((text) => prepareInput(text, settings.maxInputChars)),
    );
    return raw.map((vector) => {
      if (expected !== undefined && vector.length !== expected) {
        throw new Error(
          `model "${settings.model}" at ${displayUrl(endpoint.url)} returned a ${vector.length}-dimensional vector, expected ${expected}`,
        );
      }
      return normalized(vector);
    });
  }

  async function probe(): Promise<number> {
    const [vector] = await embedBatch([PROBE_TEXT], undefined);
    const length = vector?.length ?? 0;
    if (settings.dimensions !== undefined && length !== settings.dimensions) {
      throw new Error(
        `model "${settings.model}" at ${displayUrl(endpoint.url)} returns ${length}-dimensional vectors, ` +
          `but dimensions is configured as ${settings.dimensions}: set dimensions to ${length} ` +
          '(a vector store built with another dimension must be re-embedded)',
      );
    }
    return length;
  }

  const dimensions = settings.verify ? await probe() : (settings.dimensions as number);

  return {
    id: `openai:${settings.model}@${dimensions}`,
    dimensions,
    async verify() {
      await probe();
    },
    async embed({ texts }) {
      const vectors: Float32Array[] = texts.map(() => new Float32Array(dimensions));
      const pending = texts.flatMap((text, index) => (text === '' ? [] : [index]));
      for (let start = 0; start < pending.length; start += settings.batchSize) {
        const positions = pending.slice(start, start + settings.batchSize);
        const batch = await embedBatch(
          positions.map((index) => texts[index] ?? ''),
          dimensions,
        );
        positions.forEach((index, i) => {
          vectors[index] = batch[i] ?? new Float32Array(dimensions);
        });
      }
      return vectors;
    },
  };
}

/** Cuts `text` to `maxChars` UTF-16 units without splitting a surrogate pair, and makes it well-formed UTF-16. */
function prepareInput(text: string, maxChars: number): string {
  let cut = text.length > maxChars ? text.slice(0, maxChars) : text;
  if (cut.length < text.length && /[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return cut.replace(/\p{Cs}/gu, '\uFFFD');
}

/** The vector scaled to unit L2 norm, as float32 (the zero vector stays zero). */
function normalized(vector: readonly number[]): Float32Array {
  let squares = 0;
  for (const value of vector) squares += value * value;
  const scale = squares === 0 ? 0 : 1 / Math.sqrt(squares);
  return Float32Array.from(vector, (value) => value * scale);
}
