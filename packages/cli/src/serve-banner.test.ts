import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshKeys, startServe } from './serve-process.test-support.js';

/** A TCP port free on 127.0.0.1 right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// Walkthrough: the banner named the API and SMTP but not the ACME HTTP-01 or metrics listeners it had opened.
describe('the serve banner', () => {
  function serve(extra: Record<string, string>) {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-banner-'));
    const env = { ...freshKeys(), AGENTINFRA_DATA_DIR: join(dir, 'data'), AGENTINFRA_SMTP_PORT: '0', ...extra };
    return startServe(['--port', '0'], { cwd: dir, env });
  }

  it('names the ACME HTTP-01 and metrics listeners when they are open', async () => {
    const [acme, metrics] = [await freePort(), await freePort()];
    const server = await serve({ AGENTINFRA_ACME_HTTP_PORT: String(acme), AGENTINFRA_METRICS_PORT: String(metrics) });
    try {
      const line = /agentinfra listening on .*\n/.exec(server.output())?.[0] ?? '';
      expect(line).toContain(`; acme http-01 on 127.0.0.1:${acme}; metrics on http://127.0.0.1:${metrics}/metrics)`);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 30_000);

  it('names neither when they are off', async () => {
    const server = await serve({ AGENTINFRA_ACME_HTTP_PORT: '0' });
    try {
      expect(server.output()).not.toMatch(/acme http-01 on|metrics on/);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 30_000);
});
