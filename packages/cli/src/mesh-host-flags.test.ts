import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from './serve-process.test-support.js';

/** A local URL nothing listens on: a call that gets through the checks ends in "cannot reach" (exit 1). */
async function closedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

// Walkthrough: `agentinfra wg-config --endpoint nonsense` printed only "/peer/register: HTTP 400 invalid_request: The
// request body does not match the schema." (exit 1), and `mesh heartbeat` with the bridge key and no --agent failed
// only after a round trip (HTTP 400, exit 1). The CLI runs in this process (runCliInProcess): flag checks and the
// requests that follow them are the same in a process of its own.
describe('agentinfra wg-config and mesh heartbeat check their flags before any request', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-mesh-flags-'));
  const keyFile = join(dir, 'wg.key');
  const wgConfig = ['wg-config', '--private-key-file', keyFile, '--out', join(dir, 'agent0.conf')];
  let url: string;
  let bridgeKey: string;

  beforeAll(async () => {
    url = await closedUrl();
    expect((await runCliInProcess(['init'], { cwd: dir })).code).toBe(0);
    bridgeKey = JSON.parse(readFileSync(join(dir, 'agentinfra.config.json'), 'utf8')).bridgeKey;
  });

  it('names a malformed --endpoint or --agent (exit 2)', async () => {
    const endpoint = await runCliInProcess([...wgConfig, '--url', url, '--key', 'dk_device', '--endpoint', 'nonsense'], { cwd: dir });
    expect(endpoint.code).toBe(2);
    expect(endpoint.stderr).toBe(
      'agentinfra: --endpoint "nonsense": must be <host>:<port> with an IPv4 address, a bracketed IPv6 address or a DNS name\n',
    );
    expect(existsSync(keyFile)).toBe(false);
    const agent = await runCliInProcess(['mesh', 'heartbeat', '--url', url, '--key', 'dk_device', '--agent', 'no spaces'], { cwd: dir });
    expect(agent.code).toBe(2);
    expect(agent.stderr).toMatch(/^agentinfra: --agent: /);
  });

  it('refuses the bridge key of the config without --agent (exit 2), from the config file or AGENTINFRA_BRIDGE_KEY', async () => {
    const refused = 'agentinfra: --key is the bridge key, which acts for no agent of its own: pass --agent <agent_id>.\n';
    const fromFile = await runCliInProcess(['mesh', 'heartbeat', '--url', url, '--key', bridgeKey], { cwd: dir });
    expect([fromFile.code, fromFile.stderr]).toEqual([2, refused]);
    const other = mkdtempSync(join(tmpdir(), 'agentinfra-mesh-flags-'));
    const fromEnv = await runCliInProcess([...wgConfig, '--endpoint', '203.0.113.7:51820'], {
      cwd: other,
      env: {
        AGENTINFRA_URL: url,
        AGENTINFRA_KEY: 'bk_from_the_environment_0123456789',
        AGENTINFRA_BRIDGE_KEY: 'bk_from_the_environment_0123456789',
      },
    });
    expect([fromEnv.code, fromEnv.stderr]).toEqual([2, refused]);
    expect(existsSync(keyFile)).toBe(false);
  });

  // Walkthrough: `agentinfra mcp` with the bridge key went to the server, which refused it (exit 1).
  it('refuses the bridge key of the config for mcp too, before any request (exit 2)', async () => {
    const refused = await runCliInProcess(['mcp', '--url', url, '--key', bridgeKey], { cwd: dir });
    expect([refused.code, refused.stderr]).toEqual([
      2,
      'agentinfra: --key is the bridge key, which is not an MCP credential: use a device key or delegation token of the agent.\n',
    ]);
  });

  it('lets the bridge key with --agent and a device key without it through to the server', async () => {
    for (const args of [
      ['mesh', 'heartbeat', '--url', url, '--key', bridgeKey, '--agent', 'alice'],
      ['mesh', 'heartbeat', '--url', url, '--key', 'dk_device'],
    ]) {
      const result = await runCliInProcess(args, { cwd: dir });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`/peer/heartbeat: cannot reach ${url}/functions/v1`);
    }
  });
});
