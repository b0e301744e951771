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
 * The server is a real kernel (identity + artifacts, SQLite, fs store) on
 * 127.0.0.1 in this process. One artifact = POST /register, PUT upload_url,
 * POST /commit (the server moves the object, reads it back and hashes it).
 * 1 MB uploads are PUT from memory with this process's `fetch` (keep-alive;
 * starting a curl costs more than the upload); 100 MB and 1 GB uploads are PUT
 * from a file with `curl -T` in another process, as a user would, so the
 * server's event loop is not also the client's, and the RSS sampled here
 * every 10 ms during the 1 GB run is the server's alone. Medians of
 * interleaved runs. tsx itself adds about 40 MB of RSS (its loader thread): the
 * same kernel compiled and run with plain node starts at about 105 MB.
 * "vs baseline" = artifact MB/s ÷ baseline MB/s for the same size; target
 * ≥ 0.70. `durable` rows fsync every object before it becomes visible (the
 * adapter's default); the baseline never fsyncs. Peak RSS target ≤ 200 MB.
 */

import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
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
    if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
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
  const call = async (path: string, body: unknown, credential: string) => {
    const response = await fetch(`${url}/functions/v1/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${credential}` },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  await call('agent-identity/agents/create', { agent_id: 'bench', display_name: 'bench' }, bridgeKey);
  const issued = await call('agent-identity/device/issue', { agent_id: 'bench', label: 'bench' }, bridgeKey);
  return { kernel, store: fs.store, url, deviceKey: issued.device_key as string, stop: () => kernel.stop() };
}

/** register → PUT → commit of `size` bytes; the committed object is deleted afterwards (not timed). @returns seconds. */
async function artifactOnce(server: Server, source: Source): Promise<number> {
  const { size, sha256 } = source;
  const call = async (path: string, body: unknown) => {
    const response = await fetch(`${server.url}/functions/v1/agent-artifacts/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.deviceKey}` },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  const started = performance.now();
  const registered = await call('register', { agent_id: 'bench', key: 'bench.bin', mime: 'application/octet-stream', size });
  const status = await put(registered.upload_url as string, source);
  if (status !== 200) throw new Error(`PUT answered ${status}`);
  await call('commit', { artifact_id: registered.artifact_id, sha256 });
  const seconds = (performance.now() - started) / 1000;
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

  // Peak RSS first, in a process that has done nothing else yet; curl sends the file from another process.
  const gigabytePath = join(dir, '1gb.bin');
  const gigabyte: Source = { label: '1 GB', size: 1_000 * MB, path: gigabytePath, sha256: await writeSource(gigabytePath, 1_000 * MB) };
  const rssServer = await startServer(join(dir, 'rss'), true);
  let rss: { before: number; peak: number; seconds: number };
  try {
    const before = process.memoryUsage.rss();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 10);
    const seconds = await artifactOnce(rssServer, gigabyte);
    clearInterval(sampler);
    rss = { before, peak, seconds };
  } finally {
    await rssServer.stop();
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
  console.log(`| server RSS before the upload (kernel loaded under tsx) | ${(rss.before / MB).toFixed(0)} MB |`);
  console.log(`| server peak RSS | ${(rss.peak / MB).toFixed(0)} MB (target ≤ 200 MB: ${rss.peak <= 200 * MB ? 'met' : 'missed'}) |`);
  console.log(`| growth during the upload and commit | ${((rss.peak - rss.before) / MB).toFixed(0)} MB |`);
  console.log(`| throughput | ${(gigabyte.size / MB / rss.seconds).toFixed(1)} MB/s |`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
