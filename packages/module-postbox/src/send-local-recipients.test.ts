import { embeddedDatabase, sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_DOMAIN, type PostboxTestServer } from './test-support/postbox-test-server.js';
import { type SmtpSink, startSmtpSink } from './test-support/smtp-sink.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';
import { waitFor } from './test-support/webhook-receiver.js';

const alice = `alice@${MAIL_DOMAIN}`;
const bob = `bob@${MAIL_DOMAIN}`;

/** Listed messages of `agent` (`in` or `out`). */
async function listed(t: PostboxTestServer, agent: 'alice' | 'bob', direction: 'in' | 'out') {
  const response = await t.postbox('list', { agent_id: agent, direction, limit: 500 }, agent);
  expect(response.status).toBe(200);
  // biome-ignore lint/suspicious/noExplicitAny: tests read listed messages field by field
  return response.body.messages as Array<Record<string, any>>;
}

/** Sends as Alice. @returns the outbound message's id. */
async function send(t: PostboxTestServer, to: string, subject: string): Promise<string> {
  const response = await t.postbox('send', { agent_id: 'alice', from: `Alice <${alice}>`, to, subject, body: 'See you at ten.' }, 'alice');
  expect(response.status).toBe(200);
  return response.body.id as string;
}

const statusOf = async (t: PostboxTestServer, id: string) => (await listed(t, 'alice', 'out')).find((message) => message.id === id)?.status;

// Mail between agents of one server is stored directly: over the relay it would come back to the bundled MTA,
// which refuses mail from this server's own addresses (local-senders.ts).
// SQLite only: without a relay the postbox takes the same path to store the local copy and record the send as with one,
// whose SQL (the copy, its status, the retried job) the next describe runs on both engines.
describe.each(embeddedDatabase())('/send to recipients of this postbox without a relay on $name', ({ create }) => {
  const t = usePostboxServer(create, { postboxConfig: { smtp: { port: 0 } } });

  it("stores the message in Bob's inbox from Alice's address, rules applied, and records it sent", async () => {
    const rule = await t.postbox(
      'rule/put',
      { agent_id: 'bob', name: '10-team', match: { from_like: alice }, actions: [{ move_to: 'team' }] },
      'bob',
    );
    expect(rule.status).toBe(200);
    const id = await send(t, `Bob <${bob}>`, 'Standup');
    await waitFor(async () => (await statusOf(t, id)) === 'sent', 'status sent');
    const copies = (await listed(t, 'bob', 'in')).filter((message) => message.subject === 'Standup');
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatchObject({ to: bob, folder: 'team', quarantined: false });
    expect(copies[0]?.from).toContain(alice);
    expect(copies[0]?.headers['message-id']).toBe(`<${id}@${MAIL_DOMAIN}>`);
    expect(copies[0]?.body).toContain('See you at ten.');
    expect((await listed(t, 'alice', 'out')).find((message) => message.id === id)).toMatchObject({ status: 'sent', error: null });
  });
});

describe.each(sqlDatabases())('/send to local and external recipients over a relay on $name', ({ create }) => {
  let sink: SmtpSink;

  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(async () => {
    await sink?.close();
  });
  const t = usePostboxServer(create, () => ({
    postboxConfig: { smtp: { port: 0 }, relayUrl: `smtp://127.0.0.1:${sink.port}`, sendMaxAttempts: 4 },
  }));

  const bobCopies = async (subject: string) => (await listed(t, 'bob', 'in')).filter((message) => message.subject === subject);

  it('stores the local copy and relays only the external recipient', async () => {
    const id = await send(t, `${bob}, Carol <carol@partner.example>`, 'Mixed');
    await waitFor(async () => (await statusOf(t, id)) === 'sent', 'status sent');
    expect(await bobCopies('Mixed')).toHaveLength(1);
    const relayed = sink.messages.filter((message) => message.raw.includes(`Message-ID: <${id}@${MAIL_DOMAIN}>`));
    expect(relayed.map((message) => message.to)).toEqual([['carol@partner.example']]);
  });

  it("does not store Bob's copy twice when the delivery job is retried", async () => {
    sink.failTemporarily = true;
    const id = await send(t, `${bob}, later@partner.example`, 'Retried');
    const attempts = async () =>
      (
        (await t.db
          .knex('core_jobs')
          .where({ dedupe_key: `postbox.send:${id}` })
          .first()) as { attempts: number } | undefined
      )?.attempts ?? 0;
    try {
      await waitFor(async () => (await bobCopies('Retried')).length > 0, "Bob's copy from the first attempt");
      await waitFor(async () => (await attempts()) >= 2, 'a second attempt');
      expect(await statusOf(t, id)).toBe('queued');
    } finally {
      sink.failTemporarily = false;
    }
    await waitFor(async () => (await statusOf(t, id)) === 'sent', 'status sent after a retry');
    expect(await bobCopies('Retried')).toHaveLength(1);
    expect(sink.messages.filter((message) => message.raw.includes(`Message-ID: <${id}@${MAIL_DOMAIN}>`))).toHaveLength(1);
  });
});
