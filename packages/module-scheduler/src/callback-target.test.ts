import { newWebhookSecret, type SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SchedulerTestServer, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

describe.each(sqlDatabases())('agent-scheduler callback_url SSRF rules (private callbacks not allowed) on $name', ({ create }) => {
  let t: SchedulerTestServer;
  let db: SqlDatabase;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await create();
    db = fixture.db;
    cleanup = fixture.cleanup;
    t = await startSchedulerTestServer({ db, allowPrivate: false });
  });
  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it.each([
    ['http://example.com/hook', /scheme must be https, not http \(plain http is refused\)/],
    ['ftp://x.y/', /scheme must be https, not ftp\./],
    ['https://127.0.0.1/hook', /127\.0\.0\.1 is refused: it is a loopback address/],
    ['https://localhost:8443/hook', /localhost is refused: it resolves to a loopback address/],
    ['https://[::1]/hook', /loopback/],
    ['https://[::ffff:10.0.0.1]/hook', /private address/],
    ['https://10.0.0.8/hook', /private address/],
    ['https://192.168.1.20/hook', /private address/],
    ['https://100.64.0.9/hook', /carrier-grade-nat address/],
    ['https://169.254.169.254/latest/meta-data/', /link-local address/],
    ['https://[fd00::1]/hook', /unique-local address/],
    ['https://0.0.0.0/hook', /is an unspecified address/],
    ['https://user:pass@example.com/hook', /must not carry credentials/],
    ['not a url', /not a valid absolute URL/],
    ['https://nonexistent.invalid/hook', /nonexistent\.invalid does not resolve/],
  ])('refuses %s with 400', async (callback_url, reason) => {
    const response = await t.scheduler(
      'job/put',
      { agent_id: 'alice', name: 'ssrf', cadence: '@every 1h', callback_url, secret: newWebhookSecret() },
      'alice',
    );
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(reason),
      details: { fields: [{ path: 'callback_url', message: expect.stringMatching(reason) }] },
    });
    expect(JSON.stringify(response.body)).not.toContain('pass@');
    expect(await db.knex('scheduler_jobs').where({ name: 'ssrf' })).toHaveLength(0);
  });

  it('accepts a public HTTPS literal', async () => {
    const response = await t.scheduler(
      'job/put',
      { agent_id: 'alice', name: 'public', cadence: '@every 1h', callback_url: 'https://93.184.216.34/hook', secret: newWebhookSecret() },
      'alice',
    );
    expect(response.status).toBe(200);
  });
});
