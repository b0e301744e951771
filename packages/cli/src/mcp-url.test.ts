import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { runCli } from './serve-process.test-support.js';

// Operator walkthrough: `agentinfra mcp --url not-a-url` exited 1 with "agentinfra: Invalid URL",
// while the README says usage and configuration errors exit 2.
describe('agentinfra mcp with a bad server URL', () => {
  const cwd = tmpdir();

  it('is a usage error (exit 2) naming the option and the value', async () => {
    const bad = await runCli(['mcp', '--url', 'not-a-url', '--key', 'dk_example'], { cwd, env: { AGENTINFRA_URL: '' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('agentinfra: --url: "not-a-url" is not a URL; expected the server\'s base URL, like http://127.0.0.1:8787.\n');
    const ftp = await runCli(['mcp', '--url', 'ftp://example.com', '--key', 'dk_example'], { cwd });
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toContain('--url: "ftp://example.com" is not an http:// or https:// URL');
  }, 60_000);

  it('names AGENTINFRA_URL when the value came from there', async () => {
    const result = await runCli(['mcp'], { cwd, env: { AGENTINFRA_URL: 'localhost:8787', AGENTINFRA_KEY: 'dk_example' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('AGENTINFRA_URL: "localhost:8787" is not an http:// or https:// URL');
  });
});
