/**
 * Artifact upload + commit throughput on the fs blob store, against writing
 * the same bytes with `fs.createWriteStream` while hashing them with SHA-256
 * (baseline, the floor of any verified upload), measured in the same run; and
 * the server's peak RSS while a 1 GB artifact is uploaded and committed.
 *
 *   npx tsx --conditions=@agentinfra/source bench/artifacts-upload.ts   (or `pnpm bench artifacts-upload` after `tsc -b`)
 *
 * About half a minute on 2 cores; needs curl and 1.2 GB of temp space.
 *
 * Throughput: the server is a real kernel (identity + artifacts, SQLite, fs
 * store) on 127.0.0.1 in this process. One artifact = POST /register, PUT
 * upload_url, POST /commit (the server moves the object, reads it back and
 * hashes it). 1 MB uploads are PUT from memory with this process's `fetch`
 * (keep-alive; starting a curl costs more than the upload); 100 MB uploads are
 * PUT from a file with `curl -T` in another process, as a user would, so the
 * server's event loop is not also the client's. Medians of interleaved runs.
 * "vs baseline" = artifact MB/s ÷ baseline MB/s for the same size; target
 * ≥ 0.70. `durable` rows fsync every object before it becomes visible (the
 * adapter's default); the baseline never fsyncs.
 *
 * Peak RSS: the compiled `agentinfra serve` (as deployed, no tsx loader) in
 * its own process takes a 1 GB upload from curl and commits it; the peak is
 * the kernel's own high-water mark (`VmHWM` in /proc). Target ≤ 200 MB.
 */

import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createFsBlobStore } from '../packages/adapter-fs/src/index.js';
import { createSqliteDatabase } from '../packages/adapter-sqlite/src/index.js';
import {
  type BlobStore,
  coreConfigSchema,
  createKernel,
  createLogger,
  type Kernel,
  newCredential,
  newMasterKey,
} from '../packages/core/src/index.js';
import { artifactsModule } from '../packages/module-artifacts/src/index.js';
import { identityModule } from '../packages/module-identity/src/index.js';
import { benchServeEnv, startProcess } from './support/serve-process.js';

const run = promisify(execFile);
const MB = 1_000_000;
const CHUNK = 64 * 1024;
const pattern = randomBytes(1 << 20);

/** `size` bytes as 64 KiB views over one random MiB (no allocation per chunk, same bytes for every contender). */
function* chunks(size: number): Generator<Buffer> {
  for (let offset = 0; offset < size; offset += CHUNK) {
    const start = offset % pattern.length;
    yield pattern.subarray(start, Math.min(start + CHUNK, start + size - offset, pattern.length));
  }
}

function expectedSha256(size: number): string {
  const hash = createHash('sha256');
  for (const chunk of chunks(size)) hash.update(chunk);
  return hash.digest('hex');
}

/** Baseline: createWriteStream + SHA-256 of the same chunks. @returns seconds. */
async function baselineOnce(dir: string, size: number): Promise<number> {
  const started = performance.now();
  const hash = createHash('sha256');
  const out = createWriteStream(join(dir, 'baseline.bin'));
  for (const chunk of chunks(size)) {
    hash.update(chunk);
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  hash.digest('hex');
  const seconds = (performance.now() - started) / 1000;
  await rm(join(dir, 'baseline.bin'));
  return seconds;
}

/** Writes `size` bytes of the pattern to `path`. @returns their SHA-256. */
async function writeSource(path: string, size: number): Promise<string> {
  const out = createWriteStream(path);
  for (const chunk of chunks(size)) {
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return expectedSha256(size);
}

/** A body to upload: a file PUT by curl from another process, or bytes in memory PUT by this process's `fetch`. */
type Source = { label: string; size: number; sha256: string } & ({ path: string } | { bytes: Buffer });

/** PUTs the source to `url`. @returns the HTTP status. */
async function put(url: string, source: Source): Promise<number> {
  if ('bytes' in source) {
    const response = await fetch(url, { method: 'PUT', body: source.bytes });
    await response.arrayBuffer();
    return response.status;
  }
  const { stdout } = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-T', source.path, url]);
  return Number(stdout);
}

/** POSTs `body` to `<base>/functions/v1/<path>` with a bearer credential. @throws Error with the status and body when not 2xx. */
async function postJson(base: string, path: string, body: unknown, credential: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}/functions/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${credential}` },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** Creates agent `bench` with the bridge key and issues it a device key. @returns the device key. */
async function benchAgent(base: string, bridgeKey: string): Promise<string> {
  await postJson(base, 'agent-identity/agents/create', { agent_id: 'bench', display_name: 'bench' }, bridgeKey);
  const issued = await postJson(base, 'agent-identity/device/issue', { agent_id: 'bench', label: 'bench' }, bridgeKey);
  return issued.device_key as string;
}

interface Server {
  kernel: Kernel;
  store: BlobStore;
  url: string;
  deviceKey: string;
  stop(): Promise<void>;
}

async function startServer(dir: string, durable: boolean): Promise<Server> {
  let base = '';
  const fs = createFsBlobStore({ dir: join(dir, 'blobs'), publicUrl: () => base, signingKey: randomBytes(32), durable });
  const bridgeKey = newCredential('bk_');
  const kernel = createKernel({
    config: coreConfigSchema.parse({ bridgeKey, masterKey: newMasterKey(), port: 0, http: { rateLimitPerMinute: 0 } }),
    modules: [identityModule, artifactsModule],
    adapters: { sql: createSqliteDatabase({ filename: join(dir, 'bench.db') }), blobStore: fs.store, mounts: [fs.mount] },
    logger: createLogger({ level: 'silent' }),
  });
  await kernel.start();
  const { url } = await kernel.listen({ port: 0, host: '127.0.0.1' });
  base = url;
  return { kernel, store: fs.store, url, deviceKey: await benchAgent(url, bridgeKey), stop: () => kernel.stop() };
}

/**
 * The compiled CLI (`packages/cli/dist/bin.js serve`, built by `pnpm bench`'s
 * `tsc -b`) on a fresh data folder: SQLite, durable fs blobs, no SMTP or
 * HTTP-01 listener; agent `bench` gets a device key. `status(field)` reads
 * `VmRSS` (now) or `VmHWM` (peak since start) of the server from /proc, in bytes.
 */
async function startServeProcess(dataDir: string) {
  const bridgeKey = newCredential('bk_');
  const process = await startProcess([fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url)), 'serve'], {
    env: { ...benchServeEnv(dataDir), AGENTINFRA_BRIDGE_KEY: bridgeKey },
  });
  const deviceKey = await benchAgent(process.url, bridgeKey);
  const status = (field: 'VmRSS' | 'VmHWM') =>
    Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${process.child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  return { process, status, server: { url: process.url, deviceKey } };
}

/** register → PUT → commit of `size` bytes; on an in-process server the committed object is deleted afterwards (not timed). @returns seconds. */
async function artifactOnce(server: Pick<Server, 'url' | 'deviceKey'> & Partial<Server>, source: Source): Promise<number> {
  const { size, sha256 } = source;
  const call = (path: string, body: unknown) => postJson(server.url, `agent-artifacts/${path}`, body, server.deviceKey);
  const started = performance.now();
  const registered = await call('register', { agent_id: 'bench', key: 'bench.bin', mime: 'application/octet-stream', size });
  const status = await put(registered.upload_url as string, source);
  if (status !== 200) throw new Error(`PUT answered ${status}`);
  await call('commit', { artifact_id: registered.artifact_id, sha256 });
  const seconds = (performance.now() - started) / 1000;
  if (!server.kernel || !server.store) return seconds;
  const items = server.kernel.sql.knex('artifacts_items').where({ artifact_id: registered.artifact_id });
  const row = (await items.clone().first()) as { object_key: string };
  await server.store.delete({ keys: [row.object_key] });
  await items.clone().delete();
  return seconds;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const dir = await mkdtemp(join(tmpdir(), 'agentinfra-bench-artifacts-'));
try {
  const inMemory = (label: string, size: number): Source => ({
    label,
    size,
    sha256: expectedSha256(size),
    bytes: Buffer.concat([...chunks(size)]),
  });

  // Peak RSS of the server as deployed: the compiled `agentinfra serve` in its own process; curl sends the file.
  const gigabytePath = join(dir, '1gb.bin');
  const gigabyte: Source = { label: '1 GB', size: 1_000 * MB, path: gigabytePath, sha256: await writeSource(gigabytePath, 1_000 * MB) };
  let rss: { before: number; peak: number; seconds: number };
  const served = await startServeProcess(join(dir, 'rss'));
  try {
    const before = served.status('VmRSS');
    const seconds = await artifactOnce(served.server, gigabyte);
    rss = { before, peak: served.status('VmHWM'), seconds };
  } finally {
    await served.process.stop();
    await rm(gigabytePath);
  }

  const hundredPath = join(dir, '100mb.bin');
  const cases = [
    { source: inMemory('1 MB', 1 * MB), runs: 40 },
    { source: { label: '100 MB', size: 100 * MB, path: hundredPath, sha256: await writeSource(hundredPath, 100 * MB) }, runs: 7 },
  ];
  const rows: Array<{ size: string; contender: string; mbPerSecond: number; ratio: number }> = [];
  for (const durable of [true, false]) {
    const server = await startServer(join(dir, durable ? 'durable' : 'plain'), durable);
    try {
      for (const { source: file, runs } of cases) {
        await artifactOnce(server, file);
        await baselineOnce(dir, file.size);
        const baseline: number[] = [];
        const artifact: number[] = [];
        for (let index = 0; index < runs; index += 1) {
          baseline.push(await baselineOnce(dir, file.size));
          artifact.push(await artifactOnce(server, file));
        }
        const baselineMbs = file.size / MB / median(baseline);
        const artifactMbs = file.size / MB / median(artifact);
        rows.push({ size: file.label, contender: 'baseline: createWriteStream + sha256', mbPerSecond: baselineMbs, ratio: 1 });
        rows.push({
          size: file.label,
          contender: `register + PUT + commit (fs, ${durable ? 'durable' : 'no fsync'})`,
          mbPerSecond: artifactMbs,
          ratio: artifactMbs / baselineMbs,
        });
      }
    } finally {
      await server.stop();
    }
  }

  console.log('| size | contender | MB/s (median) | vs baseline |');
  console.log('|---|---|---:|---:|');
  for (const row of rows) console.log(`| ${row.size} | ${row.contender} | ${row.mbPerSecond.toFixed(1)} | ${row.ratio.toFixed(2)} |`);
  console.log('');
  console.log('| 1 GB register + curl PUT + commit (fs, durable) | value |');
  console.log('|---|---:|');
  console.log(`| agentinfra serve RSS before the upload | ${(rss.before / MB).toFixed(0)} MB |`);
  console.log(
    `| agentinfra serve peak RSS (VmHWM) | ${(rss.peak / MB).toFixed(0)} MB (target ≤ 200 MB: ${rss.peak <= 200 * MB ? 'met' : 'missed'}) |`,
  );
  console.log(`| growth during the upload and commit | ${((rss.peak - rss.before) / MB).toFixed(0)} MB |`);
  console.log(`| throughput | ${(gigabyte.size / MB / rss.seconds).toFixed(1)} MB/s |`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
