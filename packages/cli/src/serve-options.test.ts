import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshKeys, runCli, startServe } from './serve-process.test-support.js';

describe('the options of serve and of the mesh host commands', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-serve-options-'));

  // Walkthrough: `serve --help` did not say that AGENTINFRA_PORT and AGENTINFRA_HOST set --port and --host, as the
  // help of `wg-config` and `mcp` does for their variables.
  it('serve --help names the variables of --port and --host', async () => {
    const help = await runCli(['serve', '--help'], { cwd: dir });
    expect(help.code).toBe(0);
    const text = help.stdout.replace(/\s+/g, ' ');
    expect(text).toContain('--port <port> HTTP port (0 = any free port) (env: AGENTINFRA_PORT)');
    expect(text).toContain('--host <host> bind address (env: AGENTINFRA_HOST)');
  });

  // Walkthrough: `wg-config --help` showed `--key <device_key>`, though the bridge key is accepted with --agent.
  it('wg-config and mesh heartbeat --help say --key takes the bridge key with --agent', async () => {
    for (const args of [['wg-config'], ['mesh', 'heartbeat']]) {
      const help = await runCli([...args, '--help'], { cwd: dir });
      // Commander wraps the help at 80 columns.
      const text = help.stdout.replace(/\s+/g, ' ');
      expect(text, args.join(' ')).toContain('--key <key> device key, or the bridge key with --agent (env: AGENTINFRA_KEY)');
      expect(help.stdout).not.toContain('<device_key>');
    }
  });

  it('still refuses a bad --port as a usage error, and a bad AGENTINFRA_PORT naming the variable (exit 2)', async () => {
    const flag = await runCli(['serve', '--port', 'eighty'], { cwd: dir, env: freshKeys() });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain(
      "error: option '-p, --port <port>' argument 'eighty' is invalid. --port must be an integer from 0 to 65535.",
    );
    const variable = await runCli(['serve'], { cwd: dir, env: { ...freshKeys(), AGENTINFRA_PORT: 'eighty', AGENTINFRA_DATA_DIR: 'data' } });
    expect(variable.code).toBe(2);
    expect(variable.stderr).toContain('port from AGENTINFRA_PORT: expected an integer, got "eighty"');
  });

  it('lets --port win over AGENTINFRA_PORT', async () => {
    const env = {
      ...freshKeys(),
      AGENTINFRA_PORT: '1',
      AGENTINFRA_DATA_DIR: join(dir, 'data'),
      AGENTINFRA_ACME_HTTP_PORT: '0',
      AGENTINFRA_SMTP_PORT: '0',
    };
    const server = await startServe(['--port', '0'], { cwd: dir, env });
    try {
      expect(server.url).not.toMatch(/:1$/);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 30_000);
});
