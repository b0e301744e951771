import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, runCli, runCliInProcess, startServe } from './serve-process.test-support.js';

/** An OpenAI-compatible /v1/embeddings server with deterministic 16-dimension bag-of-words vectors. */
function startEmbeddingServer(): Promise<Server> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const { input } = JSON.parse(body) as { input: string[] };
      const data = input.map((text, index) => {
        const vector = new Array<number>(16).fill(0);
        for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) vector[createHash('md5').update(word).digest()[0]! % 16]! += 1;
        return { object: 'embedding', index, embedding: vector };
      });
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ object: 'list', data, model: 'bow-16' }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('changing the embedder of an existing store (issue #2)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-reembed-'));
  const base = {
    AGENTINFRA_DATA_DIR: join(dir, 'data'),
    AGENTINFRA_BRIDGE_KEY: 'bk_reembed_test_bridge_key_0123456789',
    AGENTINFRA_MASTER_KEY: Buffer.alloc(32, 3).toString('base64'),
    AGENTINFRA_ACME_HTTP_PORT: '0',
    AGENTINFRA_SMTP_PORT: '0',
  };
  let embeddings: Server;
  let openai: Record<string, string>;

  beforeAll(async () => {
    embeddings = await startEmbeddingServer();
    openai = {
      AGENTINFRA_EMBEDDER: 'openai',
      AGENTINFRA_EMBEDDER_URL: `http://127.0.0.1:${(embeddings.address() as AddressInfo).port}`,
      AGENTINFRA_EMBEDDER_MODEL: 'bow-16',
    };
  });
  afterAll(() => new Promise<void>((resolve) => embeddings.close(() => resolve())));

  it('refuses to serve with another embedder, then serves after migrate --reembed', async () => {
    const first = await startServe(['--port', '0'], { cwd: dir, env: base });
    await post(first.url, 'agent-identity/agents/create', { agent_id: 'alice', display_name: 'Alice' }, base.AGENTINFRA_BRIDGE_KEY);
    const { device_key: key } = (
      await post(first.url, 'agent-identity/device/issue', { agent_id: 'alice', label: 'x' }, base.AGENTINFRA_BRIDGE_KEY)
    ).body;
    const texts = ['the cat sleeps on the sofa', 'invoices are due on friday', 'the staging server restarts nightly'];
    for (const text of texts) {
      await post(first.url, 'agent-memory/mem/write', { agent_id: 'alice', kind: 'semantic', text, provenance: 'p', scope: ['self'] }, key);
    }
    expect(await first.stop()).toBe(0);

    const refused = await runCli(['serve', '--port', '0'], { cwd: dir, env: { ...base, ...openai } });
    // A configuration error (README "Exit codes"), like the other start-up refusals.
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('agentinfra migrate --reembed');

    // In this process (runCliInProcess): what it does to the database is the point.
    const migrated = await runCliInProcess(['migrate', '--reembed'], { cwd: dir, env: { ...base, ...openai } });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain('re-embedded semantic memories');
    expect(migrated.stderr).toMatch(/re-embedding: .*?(\d+)\/\1 memories \([\d.]+\/s, /);

    const second = await startServe(['--port', '0'], { cwd: dir, env: { ...base, ...openai } });
    try {
      expect(second.output()).toContain('embedder=openai:bow-16@16');
      const query = await post(
        second.url,
        'agent-memory/mem/query',
        { agent_id: 'alice', q: 'when are invoices due', k: 3, scope: ['self'] },
        key,
      );
      expect(query.body.hits).toHaveLength(3);
      expect(query.body.hits[0].text).toBe(texts[1]);
    } finally {
      await second.stop();
    }
  });
});
