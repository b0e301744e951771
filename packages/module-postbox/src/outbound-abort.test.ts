import { JobInterruptedError } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailRelay, RelayError } from './mail-relay.js';
import { postboxModule } from './module.js';
import { SEND_JOB } from './outbound.js';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { type StallingRelay, startStallingRelay } from './test-support/stalling-relay.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';
import { waitFor } from './test-support/webhook-receiver.js';

/** How `promise` stands after `ms`: settled one way or the other, or still pending. */
const settledWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(
      () => 'resolved',
      () => 'rejected',
    ),
    new Promise((resolve) => setTimeout(() => resolve('pending'), ms)),
  ]);

/** Waits until the relay holds an open session with a message it left unanswered. @returns that session. */
async function stalledSession(relay: StallingRelay) {
  await waitFor(() => relay.sessions.some((session) => session.stalled && session.closedAt === null), 'a stalled DATA', 5_000);
  const session = relay.sessions.find((candidate) => candidate.stalled && candidate.closedAt === null);
  if (!session) throw new Error('no stalled session');
  return session;
}

describe.each(sqlDatabases())('outbound delivery cut short by its job signal on $name', ({ create }) => {
  let relay: StallingRelay;

  beforeAll(async () => {
    relay = await startStallingRelay();
  });
  const t = usePostboxServer(create, () => ({ jobsEnabled: false, postboxConfig: { relayUrl: `smtp://127.0.0.1:${relay.port}` } }));
  // Registered after the server's, so it runs before the server stops (afterAll hooks run in reverse).
  afterAll(async () => {
    await relay?.close();
  });

  const job = postboxModule.jobs?.find((candidate) => candidate.name === SEND_JOB);
  const runJob = (id: string, attempt: number, signal: AbortSignal) => {
    if (!job) throw new Error(`no ${SEND_JOB} job`);
    return job.run({ payload: { message_id: id }, attempt, scheduledFor: null, signal, service: t.service });
  };
  const statusOf = async (id: string) => ((await t.db.knex('postbox_messages').where({ id }).first()) as { status: string }).status;

  it.each([
    ['its timeout', () => new Error('Timed out after 120000 ms.'), /Timed out after 120000 ms/],
    ['a shutdown', () => new JobInterruptedError(), /shutting down/],
  ])(
    'closes the stalled relay session and fails the attempt when %s aborts it; the retry sends once',
    async (_, reason, thrown) => {
      relay.stall = true;
      const accepted = relay.accepted.length;
      const sent = await t.postbox(
        'send',
        { agent_id: 'alice', from: `alice@${MAIL_DOMAIN}`, to: 'carol@partner.example', subject: 'Stalled', body: 'b' },
        'alice',
      );
      expect(sent.status).toBe(200);
      const id = sent.body.id as string;
      const controller = new AbortController();
      const run = runJob(id, 1, controller.signal);
      run.catch(() => undefined);
      // The relay has the final "." and never answers: the worst case, which only the signal ends.
      const session = await stalledSession(relay);
      const abortedAt = Date.now();
      controller.abort(reason());

      expect(await settledWithin(run, 2_000)).toBe('rejected');
      await expect(run).rejects.toThrow(thrown);
      await waitFor(() => session.closedAt !== null, 'the relay session to close', 1_000);
      expect((session.closedAt ?? Infinity) - abortedAt).toBeLessThan(1_000);
      expect(await statusOf(id)).toBe('queued');

      relay.stall = false;
      await runJob(id, 2, new AbortController().signal);
      expect(await statusOf(id)).toBe('sent');
      expect(relay.accepted.slice(accepted).filter((raw) => raw.includes(`<${id}@${MAIL_DOMAIN}>`))).toHaveLength(1);
    },
    20_000,
  );
});

describe('the relay send timeout', () => {
  it('closes a session the relay stalls and fails with a temporary RelayError once it passes', async () => {
    const relay = await startStallingRelay();
    const mailRelay = createMailRelay({ relayUrl: `smtp://127.0.0.1:${relay.port}`, rejectUnauthorized: true, sendTimeoutMs: 300 });
    try {
      const sending = mailRelay.send({
        from: `alice@${MAIL_DOMAIN}`,
        to: ['carol@partner.example'],
        raw: Buffer.from('Subject: s\r\n\r\nb\r\n'),
        signal: new AbortController().signal,
      });
      sending.catch(() => undefined);
      const session = await stalledSession(relay);
      expect(await settledWithin(sending, 2_000)).toBe('rejected');
      const error = await sending.catch((failure: unknown) => failure);
      expect(error).toBeInstanceOf(RelayError);
      expect(error).toMatchObject({ permanent: false, message: expect.stringContaining('did not take the message within 0.3 s') });
      await waitFor(() => session.closedAt !== null, 'the relay session to close', 1_000);
    } finally {
      mailRelay.close();
      await relay.close();
    }
  }, 10_000);
});
