import { postgresAvailability, redisAvailability, sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostboxReplicas } from './test-support/postbox-replicas.js';
import { MAIL_DOMAIN, type PostboxTestServer } from './test-support/postbox-test-server.js';
import { type SmtpSink, startSmtpSink } from './test-support/smtp-sink.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';
import { waitFor } from './test-support/webhook-receiver.js';

const RELAY_USER = 'relay-user';
const RELAY_PASS = 'relay-secret-9f3k';
const alice = `alice@${MAIL_DOMAIN}`;

describe.each(sqlDatabases())('outbound mail on $name', ({ create }) => {
  let sink: SmtpSink;

  beforeAll(async () => {
    sink = await startSmtpSink({ credentials: { user: RELAY_USER, pass: RELAY_PASS } });
  });
  afterAll(async () => {
    await sink?.close();
  });
  const t = usePostboxServer(create, () => ({
    postboxConfig: { smtp: { port: 0 }, relayUrl: `smtp://${RELAY_USER}:${RELAY_PASS}@127.0.0.1:${sink.port}`, sendMaxAttempts: 4 },
  }));

  const count = async (table: string, where: Record<string, unknown> = {}) =>
    Number(((await t.db.knex(table).where(where).count({ n: '*' }).first()) as { n: number | string }).n);
  const outbox = async (agent: 'alice' | 'bob') =>
    // biome-ignore lint/suspicious/noExplicitAny: tests read listed messages field by field
    (await t.postbox('list', { agent_id: agent, direction: 'out', limit: 500 }, agent)).body.messages as Array<Record<string, any>>;
  const statusOf = async (agent: 'alice' | 'bob', id: string) => (await outbox(agent)).find((message) => message.id === id)?.status;

  it('queues a message, delivers it through the relay (with AUTH) and records sent', async () => {
    const response = await t.postbox(
      'send',
      {
        agent_id: 'alice',
        from: `Alice <${alice}>`,
        to: 'Carol <carol@partner.example>',
        subject: 'Contract draft',
        body: 'Draft attached tomorrow.',
      },
      'alice',
    );
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: expect.stringMatching(/^msg_/), status: 'queued' });
    await waitFor(async () => (await statusOf('alice', response.body.id)) === 'sent', 'status sent');
    const delivered = sink.messages.find((message) => message.raw.includes(`Message-ID: <${response.body.id}@${MAIL_DOMAIN}>`));
    expect(delivered).toMatchObject({ from: alice, to: ['carol@partner.example'], user: RELAY_USER });
    expect(delivered?.raw).toContain('Subject: Contract draft');
    const listed = (await outbox('alice')).find((message) => message.id === response.body.id);
    expect(listed).toMatchObject({
      direction: 'out',
      folder: 'sent',
      to: 'carol@partner.example',
      status: 'sent',
      error: null,
      read: true,
    });
    expect(listed?.sent_at).toEqual(expect.any(String));
    expect(listed?.mime_ref).toMatch(/^postbox\/mime\//);
  });

  it('keeps the case of local parts in the envelope, lower-cases domains, and sends each mailbox once', async () => {
    const response = await t.postbox(
      'send',
      {
        agent_id: 'alice',
        from: alice,
        to: 'John.DOE@Partner.Example, Dana <dana@partner.example>, john.doe@partner.example',
        subject: 's',
        body: 'b',
      },
      'alice',
    );
    expect(response.status).toBe(200);
    await waitFor(async () => (await statusOf('alice', response.body.id)) === 'sent', 'status sent');
    const delivered = sink.messages.find((message) => message.raw.includes(`Message-ID: <${response.body.id}@${MAIL_DOMAIN}>`));
    expect(delivered?.to).toEqual(['John.DOE@partner.example', 'dana@partner.example']);
  });

  it('refuses a from address the agent does not own with 403 and creates nothing', async () => {
    const before = await count('postbox_messages');
    for (const from of [`bob@${MAIL_DOMAIN}`, 'alice@elsewhere.example', `nobody@${MAIL_DOMAIN}`]) {
      const response = await t.postbox('send', { agent_id: 'alice', from, to: 'x@example.org', subject: 's', body: 'b' }, 'alice');
      expect(response.status, from).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
    expect((await t.postbox('send', { agent_id: 'bob', from: alice, to: 'x@example.org', subject: 's', body: 'b' }, 'alice')).status).toBe(
      403,
    );
    expect(await count('postbox_messages')).toBe(before);
  });

  it('refuses malformed addresses with 400 naming the field', async () => {
    for (const [field, body] of [
      ['to', { to: 'not an address' }],
      ['to', { to: 'a@b.example, broken@' }],
      ['from', { from: `${alice}, bob@${MAIL_DOMAIN}` }],
      // A space where a comma belongs: addressparser reads dave as carol's display name, and dave would get nothing.
      ['to', { to: 'carol@ext.example dave@ext.example' }],
      ['to', { to: 'x@example.org, carol@ext.example dave@ext.example' }],
      ['to', { to: '"dave@ext.example" <carol@ext.example>' }],
      ['from', { from: `${alice} bob@${MAIL_DOMAIN}` }],
      // Review: a quoted local part may hold ", " and "@"; the envelope was built by splitting on ", ", so hidden
      // recipients (past the 50 cap, in no header) got the mail and the named one did not.
      ['to', { to: '"x, victim1@evil.test, victim2@evil.test, y"@partner.example' }],
      ['to', { to: 'carol@ext.example, "a b"@partner.example' }],
    ] as const) {
      const response = await t.postbox(
        'send',
        { agent_id: 'alice', from: alice, to: 'x@example.org', subject: 's', body: 'b', ...body },
        'alice',
      );
      expect(response.status).toBe(400);
      expect(response.body.error.details.fields.map((f: { path: string }) => f.path)).toEqual([field]);
    }
  });

  it('answers a list for `to` with the type error alone, and a too-short string with its length', async () => {
    const send = (to: unknown) => t.postbox('send', { agent_id: 'alice', from: alice, to, subject: 's', body: 'b' }, 'alice');
    const list = await send(['x@example.com']);
    expect(list.status).toBe(400);
    expect(list.body.error.details.fields).toEqual([{ path: 'to', message: 'Invalid input: expected string, received array' }]);
    const short = await send('ab');
    expect(short.status).toBe(400);
    expect(short.body.error.details.fields).toEqual([{ path: 'to', message: 'Too small: expected string to have >=3 characters' }]);
  });

  it('marks a message the relay refuses for good (550) failed with the answer, never the password', async () => {
    sink.refuseRecipientsWith = 'bounce';
    try {
      const response = await t.postbox(
        'send',
        { agent_id: 'alice', from: alice, to: 'bounce@partner.example', subject: 'x', body: 'y' },
        'alice',
      );
      await waitFor(async () => (await statusOf('alice', response.body.id)) === 'failed', 'status failed');
      const listed = (await outbox('alice')).find((message) => message.id === response.body.id);
      expect(listed?.error).toMatch(/550/);
      expect(listed?.error).not.toContain(RELAY_PASS);
    } finally {
      sink.refuseRecipientsWith = null;
    }
  });

  it('retries a temporary refusal (451) with back-off and then records sent', async () => {
    sink.failTemporarily = true;
    const response = await t.postbox(
      'send',
      { agent_id: 'alice', from: alice, to: 'later@partner.example', subject: 'retry me', body: 'y' },
      'alice',
    );
    await waitFor(async () => {
      const job = (await t.db
        .knex('core_jobs')
        .where({ dedupe_key: `postbox.send:${response.body.id}` })
        .first()) as { attempts: number } | undefined;
      return (job?.attempts ?? 0) >= 1;
    }, 'a first attempt');
    expect(await statusOf('alice', response.body.id)).toBe('queued');
    sink.failTemporarily = false;
    await waitFor(async () => (await statusOf('alice', response.body.id)) === 'sent', 'status sent after a retry');
  });

  it('gives the (quota+1)th send 429 with Retry-After, queues nothing, and follows a raised setting at once', async () => {
    expect((await t.server.call('agent-identity/settings/set', { key: 'postbox_send_quota_per_day', value: 3 }, t.bridge)).status).toBe(
      200,
    );
    try {
      for (let i = 0; i < 3; i += 1) {
        const response = await t.postbox(
          'send',
          { agent_id: 'bob', from: `bob@${MAIL_DOMAIN}`, to: 'x@example.org', subject: `n${i}`, body: 'b' },
          'bob',
        );
        expect(response.status).toBe(200);
      }
      const messages = await count('postbox_messages');
      const jobs = await count('core_jobs', { name: 'postbox.send' });
      const refused = await t.postbox(
        'send',
        { agent_id: 'bob', from: `bob@${MAIL_DOMAIN}`, to: 'x@example.org', subject: 'one too many', body: 'b' },
        'bob',
      );
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(86_000);
      expect(retryAfter).toBeLessThanOrEqual(86_400);
      expect(await count('postbox_messages')).toBe(messages);
      expect(await count('core_jobs', { name: 'postbox.send' })).toBe(jobs);
      expect((await t.server.call('agent-identity/settings/set', { key: 'postbox_send_quota_per_day', value: 4 }, t.bridge)).status).toBe(
        200,
      );
      const raised = await t.postbox(
        'send',
        { agent_id: 'bob', from: `bob@${MAIL_DOMAIN}`, to: 'x@example.org', subject: 'fits again', body: 'b' },
        'bob',
      );
      expect(raised.status).toBe(200);
    } finally {
      await t.server.call('agent-identity/settings/set', { key: 'postbox_send_quota_per_day', value: 100 }, t.bridge);
    }
  });
});

describe.each(sqlDatabases())('outbound mail without a relay on $name', ({ create }) => {
  const t = usePostboxServer(create, { postboxConfig: { smtp: { port: 0 } } });

  it('leaves mail for another server queued', async () => {
    const response = await t.postbox('send', { agent_id: 'alice', from: alice, to: 'x@example.org', subject: 's', body: 'b' }, 'alice');
    expect(response.body.status).toBe('queued');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const listed = await t.postbox('list', { agent_id: 'alice', direction: 'out' }, 'alice');
    expect(listed.body.messages.map((message: { status: string }) => message.status)).toEqual(['queued']);
    expect(t.service.relayDescription()).toBeNull();
  });
});

describe.runIf(postgresAvailability().available && redisAvailability().available)(
  'send quota across two replicas (PostgreSQL + Redis)',
  () => {
    let replicas: [PostboxTestServer, PostboxTestServer];
    let stop: () => Promise<void>;

    beforeAll(async () => {
      ({ replicas, stop } = await startPostboxReplicas({ smtp: { port: 0 } }));
    });
    afterAll(async () => {
      await stop?.();
    });

    it('counts sends on either replica against one quota', async () => {
      const [one, two] = replicas;
      expect(
        (await one.server.call('agent-identity/settings/set', { key: 'postbox_send_quota_per_day', value: 4 }, one.bridge)).status,
      ).toBe(200);
      const send = (replica: PostboxTestServer) =>
        replica.server.call(
          'agent-postbox/send',
          { agent_id: 'alice', from: alice, to: 'x@example.org', subject: 's', body: 'b' },
          { credential: one.keys.alice },
        );
      const statuses: number[] = [];
      for (const replica of [one, two, one, two, one, two]) statuses.push((await send(replica)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    });
  },
);
