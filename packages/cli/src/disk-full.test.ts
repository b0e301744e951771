import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, type ServeProcess, startServe } from './serve-process.test-support.js';

const MiB = 1024 * 1024;

/** Mounts a 32 MiB tmpfs with 4,096 inodes at a new folder (root only); `null` with the reason when it cannot. */
function mountSmallDisk(): { path: string } | { reason: string } {
  if (process.getuid?.() !== 0) return { reason: 'mounting a small tmpfs needs root' };
  const path = mkdtempSync(join(tmpdir(), 'agentinfra-disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m,nr_inodes=4096', 'tmpfs', path], { stdio: 'pipe' });
    return { path };
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    return { reason: `mount -t tmpfs failed (${(error as Error).message.split('\n')[0]})` };
  }
}

const disk = mountSmallDisk();
if ('reason' in disk) {
  if (process.env.AGENTINFRA_TEST_REQUIRE_SERVICES === '1') {
    throw new Error(`[agentinfra] the full-disk test must run (AGENTINFRA_TEST_REQUIRE_SERVICES=1) but ${disk.reason}`);
  }
  console.warn(`[agentinfra] skipping the full-disk test: ${disk.reason}`);
}

// A full disk must cost writes a 507 and nothing else: no crash, no half-stored upload, reads still answered.
describe.runIf('path' in disk)('agentinfra serve on a disk that fills up', () => {
  const root = 'path' in disk ? disk.path : '';
  const filler = join(root, 'filler');
  const bridgeKey = `bk_${randomBytes(32).toString('base64url')}`;
  let server: ServeProcess;
  let deviceKey: string;

  /** Fills the disk until about `leaveBytes` are free (the server writes meanwhile, so a smaller filler is tried on ENOSPC). */
  const fillTo = (leaveBytes: number) => {
    rmSync(filler, { force: true });
    for (let margin = 0; ; margin += 256 * 1024) {
      const stats = statfsSync(root);
      try {
        writeFileSync(filler, Buffer.alloc(Math.max(0, stats.bavail * stats.bsize - leaveBytes - margin)));
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC' || margin > 4 * MiB) throw error;
        rmSync(filler, { force: true });
      }
    }
  };
  const upload = async (key: string, bytes: Buffer) => {
    const registered = await post(
      server.url,
      'agent-artifacts/register',
      { agent_id: 'alice', key, mime: 'application/octet-stream', size: bytes.length, ttl_days: 1 },
      deviceKey,
    );
    expect(registered.status).toBe(200);
    return fetch(registered.body.upload_url, { method: 'PUT', body: bytes });
  };
  const remember = (text: string) =>
    post(
      server.url,
      'agent-memory/mem/write',
      { agent_id: 'alice', kind: 'semantic', text, provenance: 'disk', scope: ['self'] },
      deviceKey,
    );

  beforeAll(async () => {
    const env = {
      AGENTINFRA_DATA_DIR: join(root, 'data'),
      AGENTINFRA_BRIDGE_KEY: bridgeKey,
      AGENTINFRA_MASTER_KEY: randomBytes(32).toString('base64'),
      AGENTINFRA_ACME_HTTP_PORT: '0',
      AGENTINFRA_SMTP_PORT: '0',
    };
    server = await startServe(['--port', '0'], { cwd: root, env, timeoutMs: 60_000 });
    expect((await post(server.url, 'agent-identity/agents/create', { agent_id: 'alice', display_name: 'Alice' }, bridgeKey)).status).toBe(
      200,
    );
    deviceKey = (await post(server.url, 'agent-identity/device/issue', { agent_id: 'alice', label: 'disk' }, bridgeKey)).body.device_key;
  }, 90_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) await server.stop('SIGKILL');
    execFileSync('umount', [root]);
    rmSync(root, { recursive: true, force: true });
  });

  it('reports the low disk on /ready as degraded, without naming the path', async () => {
    const ready = await fetch(`${server.url}/ready`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { status: string; checks: Record<string, string> };
    expect(body.status).toBe('degraded');
    expect(body.checks['disk:database']).toMatch(/^low: \d+\.\d MiB free of 32\.0 MiB$/);
    expect(body.checks['disk:blobs']).toMatch(/^low: /);
    expect(JSON.stringify(body)).not.toContain(root);

    // The operator console's overview says so too.
    const signedIn = await fetch(`${server.url}/console/login`, {
      method: 'POST',
      headers: { origin: server.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key: bridgeKey }).toString(),
      redirect: 'manual',
    });
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const overview = await (await fetch(`${server.url}/console`, { headers: { cookie } })).text();
    expect(overview).toContain('<p class="badge warn">Degraded</p>');
    expect(overview).toMatch(/disk:database<\/strong>: low: /);
  });

  it('answers an upload that does not fit with 507, keeps serving, leaves no partial file, and takes it once there is room', async () => {
    fillTo(2 * MiB);
    const bytes = randomBytes(4 * MiB);
    const refused = await upload('big.bin', bytes);
    expect(refused.status).toBe(507);
    // Answered by the blob URL handler itself: a browser can read it (CORS), and the unread rest of the body ends the connection.
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(refused.headers.get('connection')).toBe('close');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_storage');
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect(readdirSync(join(root, 'data', 'blobs', 'tmp'))).toEqual([]);

    rmSync(filler);
    expect((await upload('big.bin', bytes)).status).toBe(200);
  }, 30_000);

  it('answers an upload with 507 when not even its temp file can be made (no inode left), and keeps serving', async () => {
    const spares = join(root, 'spares');
    mkdirSync(spares);
    try {
      for (let n = 0; ; n += 1) {
        try {
          writeFileSync(join(spares, String(n)), '');
        } catch (error) {
          expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
          break;
        }
      }
      const refused = await upload('no-inode.bin', randomBytes(6 * MiB));
      expect(refused.status).toBe(507);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_storage');
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
    } finally {
      rmSync(spares, { recursive: true, force: true });
    }
    expect((await upload('no-inode.bin', randomBytes(MiB))).status).toBe(200);
  }, 30_000);

  it('answers memory writes with 507 once the database cannot grow, and writes again after space is freed', async () => {
    fillTo(256 * 1024);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 40 && !statuses.includes(507); attempt += 1) {
      const written = await remember(`${randomBytes(12_000).toString('base64')} attempt ${attempt}`);
      statuses.push(written.status);
      if (written.status === 507) expect(written.body.error.code).toBe('insufficient_storage');
    }
    expect(statuses).toContain(507);
    expect(statuses.filter((status) => status !== 200 && status !== 507)).toEqual([]);
    const reads = await post(server.url, 'agent-memory/mem/query', { agent_id: 'alice', q: 'attempt' }, deviceKey);
    expect(reads.status).toBe(200);

    rmSync(filler);
    expect((await remember('written after the operator freed space')).status).toBe(200);
  }, 60_000);
});
