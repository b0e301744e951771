import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@agentinfra/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookReceiver } from './webhook-receiver.js';

const cli = fileURLToPath(new URL('../../../packages/cli/dist/bin.js', import.meta.url));
const main = fileURLToPath(new URL('./main.ts', import.meta.url));
const bridgeKey = 'bk_agent_client_example_0123456789abcdef';

/** Starts the built `agentinfra serve` on a free port with a fresh data folder; resolves with its URL. */
function serve(): Promise<{ child: ChildProcess; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-example-client-'));
  // An empty config file of its own: the keys come from the environment, and no agentinfra.config.json around is read.
  const config = join(dir, 'agentinfra.config.json');
  writeFileSync(config, '{}');
  const child = spawn(process.execPath, [cli, 'serve'], {
    env: {
      ...process.env,
      AGENTINFRA_BRIDGE_KEY: bridgeKey,
      AGENTINFRA_MASTER_KEY: Buffer.alloc(32, 3).toString('base64'),
      AGENTINFRA_DATA_DIR: dir,
      AGENTINFRA_CONFIG: config,
      AGENTINFRA_PORT: '0',
      AGENTINFRA_LOG_LEVEL: 'warn',
      AGENTINFRA_ACME_HTTP_PORT: '0',
      AGENTINFRA_SMTP_PORT: '0',
      AGENTINFRA_ALLOW_PRIVATE_CALLBACKS: 'true',
    },
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /listening on (http:\/\/[^\s)]+)/.exec(output)?.[1];
      if (url) resolve({ child, url });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${output}`)));
  });
}

/**
 * Runs the example (main.ts) with `env` and resolves with its exit status and
 * output. Asynchronous on purpose: a spawnSync would hold this process's
 * event loop for seconds, so the HTTP client could not notice that the
 * server closed an idle kept-alive connection, and the next test's first
 * request would go out on a closed socket.
 */
function runExample(env: Record<string, string>): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=@agentinfra/source', '--import', 'tsx', main],
      { env: { ...process.env, ...env }, encoding: 'utf8' },
      (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('examples/agent-client', () => {
  let server: { child: ChildProcess; url: string };
  beforeAll(async () => {
    server = await serve();
  }, 60_000);
  afterAll(() => server?.child.kill('SIGTERM'));

  it('runs as documented against a real server', async () => {
    const bridge = createClient({ url: server.url, key: bridgeKey });
    await bridge.identity.agents.create({ agent_id: 'scout', display_name: 'Scout' });
    const { device_key } = await bridge.identity.device.issue({ agent_id: 'scout', label: 'example' });
    const run = await runExample({ AGENTINFRA_URL: server.url, AGENTINFRA_KEY: device_key, AGENTINFRA_AGENT_ID: 'scout' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const sha256 = createHash('sha256').update('# Nightly report\n\nAll checks passed.\n').digest('hex');
    expect(run.stdout).toContain('recalled: The staging database is rebuilt every night at 02:00 UTC.');
    expect(run.stdout).toContain('secret: tok_example_123');
    expect(run.stdout).toMatch(new RegExp(`artifact: \\S+ 37 bytes sha256 ${sha256}`));
  }, 60_000);

  // Regression: after the root README's walk-through (steps 3 and 4 write three memories to alice), the example
  // recalled "The staging database password rotates monthly." instead of what its README shows.
  it("recalls what its README shows for an agent that also holds the root README walk-through's memories", async () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const step3 = /# 3\. write three semantic memories[^\n]*\n([\s\S]*?); do\n/.exec(readme)?.[1] ?? '';
    const walkThrough = [...step3.matchAll(/'([^']+)'/g)].map(([, text]) => text as string);
    expect(walkThrough).toHaveLength(3);
    const bridge = createClient({ url: server.url, key: bridgeKey });
    await bridge.identity.agents.create({ agent_id: 'walker', display_name: 'Walker' });
    const { device_key } = await bridge.identity.device.issue({ agent_id: 'walker', label: 'example' });
    const walker = createClient({ url: server.url, key: device_key });
    for (const text of walkThrough)
      await walker.memory.write({ agent_id: 'walker', kind: 'semantic', text, provenance: 'readme', scope: ['self'] });
    const run = await runExample({ AGENTINFRA_URL: server.url, AGENTINFRA_KEY: device_key, AGENTINFRA_AGENT_ID: 'walker' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('recalled: The staging database is rebuilt every night at 02:00 UTC.');
  }, 60_000);

  // Walkthrough: only AGENTINFRA_AGENT_ID was checked up front; without AGENTINFRA_KEY the server answered 401.
  it('names a missing AGENTINFRA_KEY or AGENTINFRA_AGENT_ID, or a malformed AGENTINFRA_URL, before any request (exit 2)', async () => {
    const noKey = await runExample({ AGENTINFRA_URL: server.url, AGENTINFRA_KEY: '', AGENTINFRA_AGENT_ID: 'scout' });
    expect([noKey.status, noKey.stderr]).toEqual([
      2,
      "Set AGENTINFRA_KEY (the agent's device key); AGENTINFRA_URL too when the server is not at http://127.0.0.1:8787.\n",
    ]);
    const neither = await runExample({ AGENTINFRA_URL: server.url, AGENTINFRA_KEY: '', AGENTINFRA_AGENT_ID: '' });
    expect(neither.stderr).toMatch(/^Set AGENTINFRA_KEY \(the agent's device key\) and AGENTINFRA_AGENT_ID; /);
    const badUrl = await runExample({ AGENTINFRA_URL: '127.0.0.1:8787', AGENTINFRA_KEY: 'dk_x', AGENTINFRA_AGENT_ID: 'scout' });
    expect([badUrl.status, badUrl.stderr]).toEqual([
      2,
      'AGENTINFRA_URL or AGENTINFRA_KEY: url is not an absolute URL (e.g. http://127.0.0.1:8787).\n',
    ]);
  }, 60_000);

  it('reports a wrong key as a typed 401', async () => {
    const run = await runExample({ AGENTINFRA_URL: server.url, AGENTINFRA_KEY: 'dk_wrong', AGENTINFRA_AGENT_ID: 'scout' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^401 unauthenticated: .+ \(request \S+\)\n$/);
  }, 60_000);

  it('receives a signed postbox webhook and refuses an unsigned one', async () => {
    const bridge = createClient({ url: server.url, key: bridgeKey });
    await bridge.identity.agents.create({ agent_id: 'courier', display_name: 'Courier' });
    const { device_key } = await bridge.identity.device.issue({ agent_id: 'courier', label: 'example' });
    const agent = createClient({ url: server.url, key: device_key });
    const events: unknown[] = [];
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const receiver = createWebhookReceiver([secret], (payload) => events.push(payload));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const { address } = await agent.postbox.alloc({ agent_id: 'courier', local_part: 'courier' });
      await agent.postbox.webhook.register({ agent_id: 'courier', url, secret, events: ['message.received'] });
      await bridge.postbox.ingest({
        to: address,
        from: 'a@example.com',
        subject: 'Hi',
        body: 'Hello',
        headers: { 'message-id': '<hi@example.com>' },
      });
      for (let attempt = 0; attempt < 100 && events.length === 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(JSON.stringify(events)).toContain('message.received');
      expect((await fetch(url, { method: 'POST', body: '{}' })).status).toBe(401);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  }, 60_000);
});
