import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, runCli, type ServeProcess, startServe } from './serve-process.test-support.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const readme = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');

/** The README's TypeScript block that follows `The same call from @supabase/supabase-js`. */
function supabaseSnippet(): string {
  const match = /The same call from `@supabase\/supabase-js`:\s*```ts\n([\s\S]*?)```/.exec(readme);
  if (!match?.[1]) throw new Error('README.md has no supabase-js snippet');
  return match[1];
}

// #13: the snippet threw `Node.js 20 detected without native WebSocket support` inside createClient.
describe('README supabase-js snippet', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-readme-'));
  const env = {
    AGENTINFRA_CONFIG: join(dir, 'agentinfra.config.json'),
    AGENTINFRA_DATA_DIR: join(dir, 'data'),
    AGENTINFRA_ACME_HTTP_PORT: '0',
    AGENTINFRA_SMTP_PORT: '0',
  };
  let server: ServeProcess;
  let deviceKey: string;

  beforeAll(async () => {
    expect((await runCli(['init'], { cwd: dir, env })).code).toBe(0);
    const { bridgeKey } = JSON.parse(readFileSync(env.AGENTINFRA_CONFIG, 'utf8')) as { bridgeKey: string };
    server = await startServe(['--port', '0'], { cwd: dir, env });
    await post(server.url, 'agent-identity/agents/create', { agent_id: 'alice', display_name: 'Alice' }, bridgeKey);
    const device = await post(server.url, 'agent-identity/device/issue', { agent_id: 'alice', label: 'readme' }, bridgeKey);
    deviceKey = device.body.device_key;
    await post(
      server.url,
      'agent-memory/mem/write',
      { agent_id: 'alice', kind: 'semantic', text: 'The user prefers dark mode in every editor.', provenance: 'readme', scope: ['self'] },
      deviceKey,
    );
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs as written on this Node against a running server', async () => {
    const source = supabaseSnippet();
    expect(source).toContain("createClient('http://127.0.0.1:8787'");
    // Under the package's node_modules, so that the snippet's imports resolve as in a user's project.
    const cacheDir = join(packageDir, 'node_modules', '.cache');
    mkdirSync(cacheDir, { recursive: true });
    const scratch = mkdtempSync(join(cacheDir, 'readme-snippet-'));
    try {
      const file = join(scratch, 'snippet.mts');
      writeFileSync(file, `${source.replace('http://127.0.0.1:8787', server.url)}\nconsole.log(JSON.stringify(data));\n`);
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
        cwd: packageDir,
        env: { ...process.env, AGENT_DEVICE_KEY: deviceKey },
      });
      expect(JSON.parse(stdout).hits[0].text).toContain('dark mode');
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 30_000);
});
