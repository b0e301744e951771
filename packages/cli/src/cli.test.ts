import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newMasterKey } from '@agentinfra/core';
import { createClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { post, runCli, runCliInProcess, type ServeProcess, startServe } from './serve-process.test-support.js';

// `serve` and the concurrent migrations run as processes of their own; the commands that finish and need no other
// process run in this one (runCliInProcess), against the same files.
describe('agentinfra CLI on the embedded default', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-cli-'));
  const env = {
    AGENTINFRA_CONFIG: join(dir, 'agentinfra.config.json'),
    AGENTINFRA_DATA_DIR: join(dir, 'data'),
    AGENTINFRA_ACME_HTTP_PORT: '0',
    AGENTINFRA_SMTP_PORT: '0',
  };
  let bridgeKey: string;
  let server: ServeProcess;

  beforeAll(async () => {
    const init = await runCliInProcess(['init'], { cwd: dir, env });
    expect(init.code).toBe(0);
    bridgeKey = JSON.parse(readFileSync(env.AGENTINFRA_CONFIG, 'utf8')).bridgeKey;
    expect(init.stdout).toContain(bridgeKey);
    server = await startServe(['--port', '0'], { cwd: dir, env });
  });

  afterAll(async () => {
    if (server && server.child.exitCode === null) await server.stop('SIGKILL');
  });

  it('init writes a 0600 config and refuses to overwrite it (exit 2)', async () => {
    expect(statSync(env.AGENTINFRA_CONFIG).mode & 0o777).toBe(0o600);
    expect(bridgeKey).toMatch(/^bk_[A-Za-z0-9_-]{43}$/);
    const again = await runCliInProcess(['init'], { cwd: dir, env });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already exists');
  });

  it('serve prints the real URL and the adapters it runs on', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).not.toMatch(/:0$/);
    expect(server.output()).toContain('sql=sqlite');
    expect(server.output()).not.toContain('readable by other users');
  });

  it('warns at serve when other users can read a config file that holds credentials, naming the settings only', async () => {
    const shared = mkdtempSync(join(tmpdir(), 'agentinfra-cli-mode-'));
    const sharedEnv = { ...env, AGENTINFRA_CONFIG: join(shared, 'agentinfra.config.json'), AGENTINFRA_DATA_DIR: join(shared, 'data') };
    expect((await runCliInProcess(['init'], { cwd: shared, env: sharedEnv })).code).toBe(0);
    // A rotation's old master keys (a list) and an ACME account's EAB key are credentials too.
    const config = JSON.parse(readFileSync(sharedEnv.AGENTINFRA_CONFIG, 'utf8'));
    Object.assign(config, {
      previousMasterKeys: [newMasterKey()],
      gateway: { eab: { kid: 'kid-1', hmacKey: 'ZWFiLWhtYWMta2V5LXZhbHVl' } },
    });
    writeFileSync(sharedEnv.AGENTINFRA_CONFIG, JSON.stringify(config));
    chmodSync(sharedEnv.AGENTINFRA_CONFIG, 0o644);
    const readable = await startServe(['--port', '0'], { cwd: shared, env: sharedEnv });
    try {
      expect(readable.output()).toContain(
        'readable by other users and holds credentials (bridgeKey, masterKey, previousMasterKeys, gateway.eab.hmacKey)',
      );
      expect(readable.output()).toContain('"mode":"0644"');
      for (const value of [config.bridgeKey, config.masterKey, config.previousMasterKeys[0], config.gateway.eab.hmacKey]) {
        expect(readable.output()).not.toContain(value);
      }
    } finally {
      expect(await readable.stop()).toBe(0);
    }
  });

  it('refuses a second serve on the same SQLite database with exit 2, and leaves the first one serving', async () => {
    const second = await runCli(['serve', '--port', '0'], { cwd: dir, env });
    expect(second.code).toBe(2);
    expect(second.stderr).toContain('Another process is already serving');
    expect(second.stderr).toContain('agentinfra.db.serve-lock');
    expect((await fetch(`${server.url}/ready`)).status).toBe(200);
  });

  it('walks through the README: agent, device key, three memories, a query', async () => {
    expect((await post(server.url, 'agent-identity/agents/create', { agent_id: 'alice', display_name: 'Alice' }, bridgeKey)).status).toBe(
      200,
    );
    const device = await post(server.url, 'agent-identity/device/issue', { agent_id: 'alice', label: 'laptop' }, bridgeKey);
    const key = device.body.device_key as string;
    const texts = [
      'The user prefers dark mode in every editor.',
      'Deploys to production happen on Tuesdays after the standup.',
      'The staging database password rotates monthly.',
    ];
    for (const text of texts) {
      const written = await post(
        server.url,
        'agent-memory/mem/write',
        { agent_id: 'alice', kind: 'semantic', text, provenance: 'readme', scope: ['self'] },
        key,
      );
      expect(written.status).toBe(200);
      expect(written.body.id).toMatch(/^mem_/);
    }
    const query = await post(
      server.url,
      'agent-memory/mem/query',
      { agent_id: 'alice', q: 'which day do we deploy to production?', k: 3, scope: ['self'] },
      key,
    );
    expect(query.status).toBe(200);
    expect(query.body.hits).toHaveLength(3);
    expect(query.body.hits[0].text).toBe(texts[1]);
  });

  it('answers @supabase/supabase-js functions.invoke unchanged', async () => {
    const device = await post(server.url, 'agent-identity/device/issue', { agent_id: 'alice', label: 'supabase' }, bridgeKey);
    // Node 20 has no global WebSocket; supabase-js asks for one for its realtime client (unused here).
    const supabase = createClient(server.url, device.body.device_key, {
      auth: { persistSession: false, autoRefreshToken: false },
      realtime: { transport: WebSocket as never },
    });
    const { data, error } = await supabase.functions.invoke('agent-memory/mem/query', {
      body: { agent_id: 'alice', q: 'editor theme', k: 1, scope: ['self'] },
    });
    expect(error).toBeNull();
    expect(data.hits[0].text).toContain('dark mode');
  });

  it('serves artifact uploads and downloads on its own signed URLs (local blob folder)', async () => {
    const device = await post(server.url, 'agent-identity/device/issue', { agent_id: 'alice', label: 'files' }, bridgeKey);
    const key = device.body.device_key as string;
    const bytes = Buffer.from('hello artifacts\n');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const registered = await post(
      server.url,
      'agent-artifacts/register',
      { agent_id: 'alice', key: 'notes/hello.txt', mime: 'text/plain', size: bytes.length, ttl_days: 1 },
      key,
    );
    expect(registered.status).toBe(200);
    expect(registered.body.upload_url.startsWith(server.url)).toBe(true);
    const put = await fetch(registered.body.upload_url, { method: 'PUT', body: bytes, headers: registered.body.upload_headers });
    expect(put.status).toBeLessThan(300);
    const committed = await post(server.url, 'agent-artifacts/commit', { artifact_id: registered.body.artifact_id, sha256 }, key);
    expect(committed.body.status).toBe('committed');
    await post(server.url, 'agent-identity/agents/create', { agent_id: 'reader', display_name: 'Reader' }, bridgeKey);
    const grant = await post(
      server.url,
      'agent-artifacts/grant',
      { artifact_id: registered.body.artifact_id, to_agent: 'reader', expires_at: new Date(Date.now() + 60_000).toISOString() },
      key,
    );
    const fetched = await post(server.url, 'agent-artifacts/fetch', { grant_token: grant.body.token });
    const download = await fetch(fetched.body.url);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes);
  });

  it('issue-device and agents create work on the database directly', async () => {
    const created = await runCliInProcess(['agents', 'create', '--agent', 'bob', '--name', 'Bob', '--json'], { cwd: dir, env });
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout).agent_id).toBe('bob');
    const issued = await runCliInProcess(['issue-device', '--agent', 'bob', '--label', 'cli', '--json'], { cwd: dir, env });
    expect(issued.code).toBe(0);
    const key = JSON.parse(issued.stdout).device_key as string;
    const write = await post(
      server.url,
      'agent-memory/mem/write',
      { agent_id: 'bob', kind: 'episode', text: 'hello', provenance: 'cli', scope: ['self'] },
      key,
    );
    expect(write.status).toBe(200);
    const missing = await runCliInProcess(['issue-device', '--agent', 'nobody', '--label', 'x'], { cwd: dir, env });
    expect(missing.code).toBe(1);
    const badId = await runCliInProcess(['issue-device', '--agent', 'no spaces', '--label', 'x'], { cwd: dir, env });
    expect(badId.code).toBe(2);
    // The API's own bounds: a label and a display name of 1 to 256 characters.
    for (const [args, flag] of [
      [['issue-device', '--agent', 'bob', '--label', ''], '--label'],
      [['issue-device', '--agent', 'bob', '--label', 'x'.repeat(257)], '--label'],
      [['agents', 'create', '--agent', 'carol', '--name', ''], '--name'],
    ] as const) {
      const refused = await runCliInProcess([...args], { cwd: dir, env });
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toContain(`${flag}: Too `);
    }
    const usage = await runCliInProcess(['issue-device'], { cwd: dir, env });
    expect(usage.code).toBe(2);
  });

  it('stops gracefully on SIGTERM, leaves no plaintext secret or device key in the files, and serves the same data after a restart', async () => {
    const device = await post(server.url, 'agent-identity/device/issue', { agent_id: 'alice', label: 'secrets' }, bridgeKey);
    const secret = 'sk-live-plaintext-must-not-leak-4242';
    expect(
      (await post(server.url, 'agent-identity/secrets/put', { agent_id: 'alice', key: 'api', value: secret }, device.body.device_key))
        .status,
    ).toBe(200);
    expect(await server.stop('SIGTERM')).toBe(0);
    const files = readdirSync(env.AGENTINFRA_DATA_DIR).filter((name) => name.startsWith('agentinfra.db'));
    expect(files).toContain('agentinfra.db');
    for (const name of files) {
      const bytes = readFileSync(join(env.AGENTINFRA_DATA_DIR, name));
      expect(bytes.includes(Buffer.from(secret)), name).toBe(false);
      expect(bytes.includes(Buffer.from(device.body.device_key)), name).toBe(false);
      expect(bytes.includes(Buffer.from(bridgeKey)), name).toBe(false);
    }
    server = await startServe(['--port', '0'], { cwd: dir, env });
    const again = await post(server.url, 'agent-identity/device/issue', { agent_id: 'alice', label: 'after-restart' }, bridgeKey);
    const query = await post(
      server.url,
      'agent-memory/mem/query',
      { agent_id: 'alice', q: 'dark mode', k: 10, scope: ['self'] },
      again.body.device_key,
    );
    expect(query.body.hits).toHaveLength(3);
    const read = await post(server.url, 'agent-identity/secrets/get', { agent_id: 'alice', key: 'api' }, again.body.device_key);
    expect(read.body).toEqual({ value: secret });
    // A closed terminal or a dropped SSH session stops the server the same orderly way.
    expect(await server.stop('SIGHUP')).toBe(0);
  });

  // Review: two `migrate` started at once on a fresh data folder raced to create the migrations table, and one failed
  // with "table core_migrations already exists": the SQLite lock was only a queue inside one process.
  it('runs migrate started three times at once on a fresh data folder, each exiting 0', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'agentinfra-cli-migrate-'));
    const freshEnv = { ...env, AGENTINFRA_CONFIG: join(fresh, 'agentinfra.config.json'), AGENTINFRA_DATA_DIR: join(fresh, 'data') };
    expect((await runCliInProcess(['init'], { cwd: fresh, env: freshEnv })).code).toBe(0);
    const runs = await Promise.all([1, 2, 3].map(() => runCli(['migrate'], { cwd: fresh, env: freshEnv })));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
  });

  it('reports a missing or invalid config with exit 2 naming the key', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'agentinfra-cli-empty-'));
    const result = await runCliInProcess(['migrate'], { cwd: empty });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bridgeKey');
    expect(result.stderr).toContain('AGENTINFRA_BRIDGE_KEY');
  });
});
