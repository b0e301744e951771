import { execFile, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createSqliteDatabase } from '@agentinfra/adapter-sqlite';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshKeys, post, runCli, runCliInProcess, type ServeProcess, startServe } from './serve-process.test-support.js';

const swaksFound = spawnSync('swaks', ['--version'], { stdio: 'ignore' }).status === 0;
if (!swaksFound) {
  const line = '[agentinfra] swaks is not installed: run .ci/install-mail-tools.sh';
  if (process.env.CI) throw new Error(line);
  console.warn(`${line}; the backup test sends no SMTP mail`);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What one writer had acknowledged. */
interface Acknowledged {
  memories: string[];
  kv: Array<{ key: string; value: string }>;
  secrets: Array<{ key: string; value: string }>;
  artifacts: Array<{ id: string; sha256: string }>;
  mails: string[];
}

const WRITERS = 8;

// #15: backup while 8 writers write, restore into a new directory, start on it. The backup and the servers run as
// processes of their own; the refusals, the restore and the chain check run in this process (runCliInProcess).
describe('agentinfra backup and restore on the embedded default', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-backup-'));
  const keys = {
    ...freshKeys(),
    AGENTINFRA_ACME_HTTP_PORT: '0',
    AGENTINFRA_RATE_LIMIT_PER_MINUTE: '0',
  };
  const source = { ...keys, AGENTINFRA_DATA_DIR: join(dir, 'data') };
  const target = { ...keys, AGENTINFRA_DATA_DIR: join(dir, 'restored'), AGENTINFRA_SMTP_PORT: '0' };
  const bridge = keys.AGENTINFRA_BRIDGE_KEY;
  const archive = join(dir, 'backup.tar.gz');
  let server: ServeProcess;
  let restored: ServeProcess | undefined;
  let smtp: string;
  const deviceKeys: string[] = [];
  const before: Acknowledged[] = [];
  let backup: { code: number | null; stdout: string; stderr: string };
  let afterCount = 0;

  /** One round of writes by writer `w`; pushes what was acknowledged into `into`. */
  const writeRound = async (w: number, round: number, into: Acknowledged) => {
    const agent = `writer${w}`;
    const key = deviceKeys[w] as string;
    const tag = `${w}-${round}`;
    const memory = await post(
      server.url,
      'agent-memory/mem/write',
      { agent_id: agent, kind: 'semantic', text: `fact ${tag} about the deploy window`, provenance: 'test', scope: ['self'] },
      key,
    );
    if (memory.status === 200) into.memories.push(memory.body.id);
    const kv = { key: `k${tag}`, value: `value ${tag}` };
    if ((await post(server.url, 'agent-memory/kv/put', { agent_id: agent, ...kv, scope: ['self'] }, key)).status === 200) into.kv.push(kv);
    const secret = { key: `s${round}`, value: `secret ${tag} ${randomBytes(4).toString('hex')}` };
    if ((await post(server.url, 'agent-identity/secrets/put', { agent_id: agent, ...secret }, key)).status === 200)
      into.secrets.push(secret);
    const bytes = randomBytes(2_000 + round * 10);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const registered = await post(
      server.url,
      'agent-artifacts/register',
      { agent_id: agent, key: `files/${tag}.bin`, mime: 'application/octet-stream', size: bytes.length, ttl_days: 1 },
      key,
    );
    await fetch(registered.body.upload_url, { method: 'PUT', body: bytes, headers: registered.body.upload_headers });
    const committed = await post(server.url, 'agent-artifacts/commit', { artifact_id: registered.body.artifact_id, sha256 }, key);
    if (committed.status === 200) into.artifacts.push({ id: registered.body.artifact_id, sha256 });
    if (swaksFound) {
      const subject = `mail ${tag}`;
      await promisify(execFile)('swaks', [
        '--server',
        smtp,
        '--to',
        `${agent}@localhost`,
        '--from',
        'sender@example.com',
        '--header',
        `Subject: ${subject}`,
        '--body',
        `body of ${tag}`,
      ]);
      into.mails.push(subject);
    }
  };

  beforeAll(async () => {
    smtp = `127.0.0.1:${await freePort()}`;
    server = await startServe(['--port', '0'], { cwd: dir, env: { ...source, AGENTINFRA_SMTP_PORT: smtp.split(':')[1] } });
    for (let w = 0; w < WRITERS; w++) {
      expect(
        (await post(server.url, 'agent-identity/agents/create', { agent_id: `writer${w}`, display_name: `W${w}` }, bridge)).status,
      ).toBe(200);
      deviceKeys.push(
        (await post(server.url, 'agent-identity/device/issue', { agent_id: `writer${w}`, label: 'w' }, bridge)).body.device_key,
      );
      expect(
        (await post(server.url, 'agent-postbox/alloc', { agent_id: `writer${w}`, local_part: `writer${w}` }, deviceKeys[w])).status,
      ).toBe(200);
    }
    // Acknowledged before the backup begins: two rounds per writer.
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        const acked: Acknowledged = { memories: [], kv: [], secrets: [], artifacts: [], mails: [] };
        before[w] = acked;
        for (let round = 0; round < 2; round++) await writeRound(w, round, acked);
      }),
    );
    // The backup runs while the same 8 writers keep writing.
    let backupDone = false;
    const running = runCli(['backup', '--out', archive], { cwd: dir, env: source }).finally(() => {
      backupDone = true;
    });
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        const during: Acknowledged = { memories: [], kv: [], secrets: [], artifacts: [], mails: [] };
        for (let round = 100; !backupDone; round++) {
          await writeRound(w, round, during);
          afterCount += 1;
        }
      }),
    );
    backup = await running;
  }, 180_000);

  afterAll(async () => {
    for (const process of [server, restored]) if (process && process.child.exitCode === null) await process.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('backup wrote a gzipped tar with a manifest and said the master key is not in it', async () => {
    expect(backup.stderr).not.toContain('agentinfra:');
    expect(backup.code).toBe(0);
    expect(afterCount).toBeGreaterThan(0);
    expect(backup.stdout).toContain('The master key is NOT in the backup');
    const entries: string[] = [];
    await tar.list({ file: archive, onReadEntry: (entry) => void entries.push(entry.path) });
    expect(entries).toContain('manifest.json');
    expect(entries).toContain('agentinfra.db');
    expect(entries.some((path) => path.startsWith('blobs/objects/'))).toBe(true);
    expect(entries.some((path) => path.startsWith('blobs/tmp'))).toBe(false);
  });

  it('refuses to overwrite the archive, a non-empty data directory and a damaged archive', async () => {
    expect((await runCliInProcess(['backup', '--out', archive], { cwd: dir, env: source })).code).toBe(2);
    const busy = await runCliInProcess(['restore', '--from', archive], { cwd: dir, env: source });
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain('is not empty');

    const unpacked = join(dir, 'tampered');
    mkdirSync(unpacked);
    await tar.extract({ file: archive, cwd: unpacked });
    const manifest = JSON.parse(readFileSync(join(unpacked, 'manifest.json'), 'utf8'));
    const blob = manifest.files.find((file: { path: string }) => file.path.startsWith('blobs/'));
    // The same size with other bytes: a size the manifest does not list is refused before it is unpacked.
    const damaged = readFileSync(join(unpacked, blob.path));
    damaged[0] = (damaged[0] as number) ^ 0xff;
    writeFileSync(join(unpacked, blob.path), damaged);
    const tampered = join(dir, 'tampered.tar.gz');
    await tar.create({ gzip: true, file: tampered, cwd: unpacked }, ['manifest.json', 'agentinfra.db', 'blobs']);
    const refused = await runCliInProcess(['restore', '--from', tampered], {
      cwd: dir,
      env: { ...target, AGENTINFRA_DATA_DIR: join(dir, 'never') },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`checksum mismatch for ${blob.path}`);
    expect(() => readFileSync(join(dir, 'never', 'agentinfra.db'))).toThrow();
  });

  it('refuses a backup made by a newer build (a migration this one does not know) with exit 2, restoring nothing', async () => {
    const unpacked = join(dir, 'newer');
    mkdirSync(unpacked);
    await tar.extract({ file: archive, cwd: unpacked });
    const manifest = JSON.parse(readFileSync(join(unpacked, 'manifest.json'), 'utf8'));
    manifest.migrations.core_migrations.push('20991231000000_core_from_the_future');
    writeFileSync(join(unpacked, 'manifest.json'), JSON.stringify(manifest));
    const newer = join(dir, 'newer.tar.gz');
    await tar.create({ gzip: true, file: newer, cwd: unpacked }, ['manifest.json', 'agentinfra.db', 'blobs']);
    const refused = await runCliInProcess(['restore', '--from', newer], {
      cwd: dir,
      env: { ...target, AGENTINFRA_DATA_DIR: join(dir, 'never') },
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('was made by a newer agentinfra');
    expect(refused.stderr).toContain('20991231000000_core_from_the_future');
    expect(() => readFileSync(join(dir, 'never', 'agentinfra.db'))).toThrow();
  });

  it('refuses PostgreSQL and S3 configurations with a pointer to docs/operations.md', async () => {
    const result = await runCliInProcess(['backup', '--out', join(dir, 'pg.tar.gz')], {
      cwd: dir,
      env: { ...source, AGENTINFRA_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('docs/operations.md');
  });

  it('restores into a new directory where serve finds everything acknowledged before the backup began', async () => {
    const result = await runCliInProcess(['restore', '--from', archive], { cwd: dir, env: target });
    expect(result.stderr).not.toContain('agentinfra:');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('every checksum verified');
    restored = await startServe(['--port', '0'], { cwd: dir, env: target });
    for (let w = 0; w < WRITERS; w++) {
      const agent = `writer${w}`;
      const key = deviceKeys[w] as string;
      const acked = before[w] as Acknowledged;
      expect(acked.kv).toHaveLength(2);
      for (const kv of acked.kv) {
        expect((await post(restored.url, 'agent-memory/kv/get', { agent_id: agent, key: kv.key, scope: ['self'] }, key)).body.value).toBe(
          kv.value,
        );
      }
      for (const secret of acked.secrets) {
        expect((await post(restored.url, 'agent-identity/secrets/get', { agent_id: agent, key: secret.key }, key)).body.value).toBe(
          secret.value,
        );
      }
      for (const artifact of acked.artifacts) {
        const download = await post(restored.url, 'agent-artifacts/download', { artifact_id: artifact.id }, key);
        expect(download.status).toBe(200);
        const bytes = Buffer.from(await (await fetch(download.body.url)).arrayBuffer());
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(artifact.sha256);
      }
      const inbox = await post(restored.url, 'agent-postbox/list', { agent_id: agent, direction: 'in', limit: 100, since: null }, key);
      const subjects = inbox.body.messages.map((message: { subject: string }) => message.subject);
      for (const subject of acked.mails) expect(subjects).toContain(subject);
      for (const message of inbox.body.messages) {
        expect((await post(restored.url, 'agent-postbox/raw', { agent_id: agent, id: message.id }, key)).status).toBe(200);
      }
    }
    await restored.stop();
    const sql = createSqliteDatabase({ filename: join(target.AGENTINFRA_DATA_DIR, 'agentinfra.db') });
    try {
      const ids = before.flatMap((acked) => acked.memories);
      expect(ids).toHaveLength(WRITERS * 2);
      const found = await sql.knex('memory_records').whereIn('id', ids).count({ count: '*' }).first();
      expect(Number(found?.count)).toBe(ids.length);
    } finally {
      await sql.close();
    }
    const verified = await runCliInProcess(['audit', 'verify'], { cwd: dir, env: target });
    expect(verified.stderr).toBe('');
    expect(verified.stdout).toMatch(/^audit chain ok: \d+ events checked/);
  });
});
