/**
 * A stand-in OpenAI-compatible embeddings server for the PostgreSQL memory
 * benchmarks: `POST /v1/embeddings` with `{ model, input: string | string[] }`
 * answers `{ object: 'list', data: [{ object: 'embedding', index, embedding }], model }`
 * where each embedding is {@link vectorForText} of its input (384 dimensions),
 * so the benchmark knows every stored and queried vector. Runs as its own
 * process (`node --import tsx bench/support/vector-embedding-server.ts`), listens on
 * a free loopback port and prints `listening on http://127.0.0.1:<port>`.
 */
import { createServer } from 'node:http';
import { listenOnLoopback } from './loopback-listen.js';
import { vectorForText } from './synthetic-vectors.js';

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    if (request.method !== 'POST' || request.url !== '/v1/embeddings') {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    let body: { model?: unknown; input?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"body is not JSON"}');
      return;
    }
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(inputs) || inputs.some((input) => typeof input !== 'string')) {
      response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"input must be a string or strings"}');
      return;
    }
    const data = (inputs as string[]).map((input, index) => ({
      object: 'embedding',
      index,
      embedding: Array.from(vectorForText(input)),
    }));
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: body.model }));
  });
});
listenOnLoopback(server);
