/**
 * Starting the real `agentinfra serve` (packages/cli/dist/bin.js, built by
 * `npx tsc -b packages/cli`) for the PostgreSQL benchmarks, with the
 * stand-in embeddings server of {@link startEmbeddingServer} as its
 * OpenAI-compatible embedder, on PostgreSQL (a given schema) or on SQLite
 * (a fresh temporary folder).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJsonClient } from './json-client.js';
import { BENCH_BRIDGE_KEY, benchServeEnv, type ServerProcess, startProcess } from './serve-process.js';
import { DIMENSIONS } from './synthetic-vectors.js';

const cli = fileURLToPath(new URL('../../packages/cli/dist/bin.js', import.meta.url));
const embeddingServer = fileURLToPath(new URL('./vector-embedding-server.ts', import.meta.url));
const inProcessEmbedderServer = fileURLToPath(new URL('./in-process-embedder-server.ts', import.meta.url));

/** The PostgreSQL URL of the benchmarks: `AGENTINFRA_TEST_DATABASE_URL`, default `postgres://postgres@127.0.0.1:5432/test`. */
export const databaseUrl = process.env.AGENTINFRA_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** `url` without its password, for messages. */
export function displayDatabaseUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

/** Starts `vector-embedding-server.ts` in its own Node process (through tsx); `stop` also works after a crash. */
export async function startEmbeddingServer(): Promise<ServerProcess> {
  const server = await startProcess(['--import', import.meta.resolve('tsx'), embeddingServer]);
  const running = () => server.child.exitCode === null && server.child.signalCode === null;
  return { ...server, stop: () => (running() ? server.stop() : Promise.resolve()) };
}

/** Where `agentinfra serve` keeps its data. */
export type BenchDatabase = { engine: 'postgres'; url: string; schema: string } | { engine: 'sqlite' };

/** A running server with one agent (`bench`) and its device key. */
export interface BenchServer {
  process: ServerProcess;
  /** `Authorization` header value of the `bench` agent's device key. */
  authorization: string;
  stop(): Promise<void>;
}

/**
 * Starts `agentinfra serve` on `database` with the embedder at
 * `embedderUrl` (model `synthetic-384`, 384 dimensions), `warn` logging and
 * the per-credential rate limit, ACME HTTP-01 and SMTP listeners off, then
 * creates agent `bench` (unless another server on the same store did) and
 * issues it a device key through the API. With `embedder: 'in-process'` the
 * server is in-process-embedder-server.ts instead: the same kernel and
 * configuration, the same synthetic model computed in the server process
 * rather than requested over HTTP. Server stderr is copied to ours; an exit
 * the benchmark did not ask for is reported on stderr. With
 * `BENCH_SERVER_CPU_PROF=<folder>` the server writes a V8 CPU profile there
 * when it stops.
 * @throws Error when the server does not start or the API refuses.
 */
export async function startBenchServer(
  database: BenchDatabase,
  embedderUrl: string,
  options: { embedder?: 'http' | 'in-process' } = {},
): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-bench-'));
  const env: NodeJS.ProcessEnv = {
    ...benchServeEnv(dir),
    AGENTINFRA_EMBEDDER: 'openai',
    AGENTINFRA_EMBEDDER_URL: embedderUrl,
    AGENTINFRA_EMBEDDER_MODEL: `synthetic-${DIMENSIONS}`,
    AGENTINFRA_EMBEDDER_DIMENSIONS: String(DIMENSIONS),
    ...(database.engine === 'postgres' ? { AGENTINFRA_DATABASE_URL: database.url, AGENTINFRA_DATABASE_SCHEMA: database.schema } : {}),
  };
  let server: ServerProcess;
  try {
    const profile = process.env.BENCH_SERVER_CPU_PROF;
    const program = options.embedder === 'in-process' ? ['--import', import.meta.resolve('tsx'), inProcessEmbedderServer] : [cli, 'serve'];
    server = await startProcess([...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []), ...program], { env });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let stopping = false;
  const label = `agentinfra serve (${database.engine}${options.embedder === 'in-process' ? ', embedder in process' : ''}, pid ${server.child.pid})`;
  server.child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[${label}] ${chunk.toString()}`));
  server.child.once('exit', (code, signal) => {
    if (stopping) return;
    const why = signal ?? (code === 0 ? 'code 0: another process sent it SIGTERM or SIGINT' : `code ${code}`);
    process.stderr.write(`[bench] ${label} exited unexpectedly (${why})\n`);
  });
  const stop = async () => {
    stopping = true;
    if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const client = createJsonClient(`${server.url}/functions/v1`);
  try {
    const bridge = { authorization: `Bearer ${BENCH_BRIDGE_KEY}` };
    await client.post('/agent-identity/agents/create', { agent_id: 'bench', display_name: 'Bench' }, bridge).catch((error: Error) => {
      if (!/HTTP 409/.test(error.message)) throw error;
    });
    const issued = await client.post<{ device_key: string }>('/agent-identity/device/issue', { agent_id: 'bench', label: 'bench' }, bridge);
    return { process: server, authorization: `Bearer ${issued.body.device_key}`, stop };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.close();
  }
}
