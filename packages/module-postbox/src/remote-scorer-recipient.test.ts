import { createServer, type Server } from 'node:http';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INJECTION_HEADER } from './scoring/injection-headers.js';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

/** A model server stub on a loopback port: answers every request `{ "score": 0.1 }` and keeps the bodies it got. */
async function startScorerStub(): Promise<{ url: string; received: string[]; close(): Promise<void> }> {
  const received: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"score":0.1}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/score`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.each(sqlDatabases())('/ingest with a remote HTTP scorer on $name', ({ create }) => {
  let scorer: Awaited<ReturnType<typeof startScorerStub>>;

  beforeAll(async () => {
    scorer = await startScorerStub();
  });
  afterAll(async () => {
    await scorer?.close();
  });
  const t = usePostboxServer(create, () => ({ postboxConfig: { smtp: { port: 0 }, scorer: { kind: 'http', url: scorer.url } } }));

  const mail = (to: string, secret: string) => ({
    to,
    from: 'sender@example.org',
    subject: 'Quarterly numbers',
    body: `The figures are attached. ${secret}`,
    headers: { 'message-id': `<${secret}@example.org>` },
  });

  it('refuses mail for an address no agent holds with 404 before the remote scorer sees any of it', async () => {
    const refused = await t.postbox('ingest', mail(`nobody@${MAIL_DOMAIN}`, 'never-scored'), t.bridge);
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('not_found');
    expect(scorer.received).toEqual([]);

    // The stub is the scorer in use: mail for alice reaches it, once.
    const stored = await t.postbox('ingest', mail(`alice@${MAIL_DOMAIN}`, 'scored-once'), t.bridge);
    expect(stored.status).toBe(200);
    expect(stored.body.injection_score).toBe(0.1);
    expect(scorer.received).toHaveLength(1);
    expect(scorer.received[0]).toContain('scored-once');
    const listed = await t.postbox('list', { agent_id: 'alice', limit: 500 }, 'alice');
    expect(listed.body.messages[0].headers[INJECTION_HEADER]).toMatch(/^scorer=http:http:\/\/127\.0\.0\.1:\d+; score=0\.1;/);
  });
});
