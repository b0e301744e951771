import { newWebhookSecret } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallbackReceiver, startCallbackReceiver } from './test-support/callback-receiver.js';
import { cronOnceIn, type SchedulerTestServer, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

/** The callback timeout of this test's server: far longer than the outcome may take. */
const CALLBACK_TIMEOUT_MS = 8_000;

describe.each(sqlDatabases())('a callback answered with 2xx headers and a body that never ends, on $name', ({ create }) => {
  let t: SchedulerTestServer;
  let cleanup: () => Promise<void>;
  let receiver: CallbackReceiver;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    receiver = await startCallbackReceiver();
    t = await startSchedulerTestServer({ db: fixture.db, schedulerConfig: { callbackTimeoutMs: CALLBACK_TIMEOUT_MS } });
  });
  afterAll(async () => {
    await t?.server.stop();
    await receiver?.close();
    await cleanup?.();
  });

  it('succeeds at the status and hangs up on the body at once, instead of holding the attempt until the timeout', async () => {
    let hungUpAt: number | null = null;
    let answeredAt = 0;
    receiver.answer('/open', (response) => {
      answeredAt = Date.now();
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('still thinking');
      response.once('close', () => {
        hungUpAt = Date.now();
      });
    });
    const { cadence } = cronOnceIn(1_000);
    const put = await t.scheduler(
      'job/put',
      { agent_id: 'alice', name: 'open', cadence, callback_url: `${receiver.url}/open`, secret: newWebhookSecret(), max_attempts: 1 },
      'alice',
    );
    expect(put.status).toBe(200);

    await receiver.waitFor(() => hungUpAt !== null, CALLBACK_TIMEOUT_MS / 2, 'the scheduler to hang up on the open body');
    expect((hungUpAt ?? 0) - answeredAt).toBeLessThan(2_000);
    await expect
      .poll(async () => (await t.scheduler('runs/list', { agent_id: 'alice', name: 'open' }, 'alice')).body.runs[0]?.status, {
        timeout: CALLBACK_TIMEOUT_MS / 2,
      })
      .toBe('succeeded');
    const [run] = (await t.scheduler('runs/list', { agent_id: 'alice', name: 'open' }, 'alice')).body.runs;
    expect(run).toMatchObject({ status: 'succeeded', attempts: 1, error: null });
    expect(Date.parse(run.finished_at) - Date.parse(run.started_at)).toBeLessThan(2_000);
    expect(receiver.on('/open')).toHaveLength(1);
  });
});
