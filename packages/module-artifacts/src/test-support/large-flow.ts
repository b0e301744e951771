import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { ArtifactsTestServer } from './artifacts-test-server.js';

const run = promisify(execFile);

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Writes `megabytes` MB of random bytes to `path` in 1 MiB chunks. @returns their SHA-256. */
async function writeRandomFile(path: string, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  for (let written = 0; written < bytes; ) {
    const chunk = randomBytes(Math.min(1 << 20, bytes - written));
    hash.update(chunk);
    written += chunk.length;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return hash.digest('hex');
}

/**
 * The whole artifact flow for a large file as a user would run it: curl PUTs
 * the file to the upload URL and GETs the download URL (separate processes,
 * so only the server's memory is in this process), with this process's peak
 * RSS sampled every 5 ms from before the upload to after the download.
 */
export async function runLargeFlow(options: { t: ArtifactsTestServer; megabytes: number }) {
  const { t } = options;
  const sizeBytes = options.megabytes * 1_000_000;
  const dir = await mkdtemp(join(tmpdir(), 'agentinfra-large-'));
  try {
    const file = join(dir, 'upload.bin');
    const sha256 = await writeRandomFile(file, sizeBytes);
    const registered = await t.artifacts(
      'register',
      { agent_id: 'alice', key: 'large/upload.bin', mime: 'application/octet-stream', size: sizeBytes },
      'alice',
    );
    expect(registered.status).toBe(200);

    const baseline = process.memoryUsage.rss();
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 5);
    try {
      const put = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-T', file, registered.body.upload_url]);
      expect(put.stdout).toBe('200');
      const commit = await t.artifacts('commit', { artifact_id: registered.body.artifact_id, sha256 }, 'alice');
      expect(commit.status, JSON.stringify(commit.body)).toBe(200);
      const grant = await t.artifacts(
        'grant',
        { artifact_id: registered.body.artifact_id, to_agent: 'bob', expires_at: new Date(Date.now() + 60_000).toISOString() },
        'alice',
      );
      const fetched = await t.artifacts('fetch', { grant_token: grant.body.token }, {});
      expect(fetched.status).toBe(200);
      const downloaded = join(dir, 'download.bin');
      const get = await run('curl', ['-sS', '-o', downloaded, '-w', '%{http_code}', fetched.body.url]);
      expect(get.stdout).toBe('200');
      return { sizeBytes, sha256, downloadedSha256: await sha256File(downloaded), peakRssGrowthBytes: peak - baseline };
    } finally {
      clearInterval(sampler);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
