import { createServer, type Server } from 'node:net';
import { createCapturedLogger } from '@agentinfra/core/testing';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

describe.each(sqlDatabases())('a postbox whose SMTP port is taken on $name', ({ create }) => {
  let blocker: Server;
  let port: number;
  const captured = createCapturedLogger('info');

  beforeAll(async () => {
    blocker = createServer();
    port = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)),
    );
  });
  afterAll(async () => {
    await new Promise((resolve) => blocker?.close(resolve));
  });
  const t = usePostboxServer(create, () => ({ logger: captured.logger, postboxConfig: { smtp: { port } } }));

  it('starts without the listener, with one warning naming the port and the code', () => {
    expect(t.service.smtpAddress()).toBeNull();
    expect(t.server.kernel.describeModules()).not.toContain('smtp on');
    const warnings = captured.lines.filter((line) => String(line.msg).startsWith('SMTP listener not started'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 40,
      code: 'EADDRINUSE',
      port,
      msg: `SMTP listener not started: cannot listen on 127.0.0.1:${port} (EADDRINUSE); mail can still arrive through /ingest`,
    });
  });

  it('serves the API: mail still arrives through /ingest and is listed', async () => {
    const ingested = await t.postbox(
      'ingest',
      { to: `alice@${MAIL_DOMAIN}`, from: 'a@example.org', subject: 'still here', body: 'hello', headers: {} },
      t.bridge,
    );
    expect(ingested.status).toBe(200);
    const listed = await t.postbox('list', { agent_id: 'alice' }, 'alice');
    expect(listed.body.messages.map((message: { id: string }) => message.id)).toContain(ingested.body.id);
  });
});
