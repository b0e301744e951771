import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { type SmtpSink, startSmtpSink } from './test-support/smtp-sink.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';
import { waitFor } from './test-support/webhook-receiver.js';

const alice = `alice@${MAIL_DOMAIN}`;

// /send fields that become header lines: a CR or LF would add a header (or, for `to`, a group that drops the first
// address), and `in_reply_to` is written to In-Reply-To and References as a message id.
describe.each(sqlDatabases())('/send header fields on $name', ({ create }) => {
  let sink: SmtpSink;

  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(async () => {
    await sink?.close();
  });
  const t = usePostboxServer(create, () => ({ postboxConfig: { smtp: { port: 0 }, relayUrl: `smtp://127.0.0.1:${sink.port}` } }));

  const send = (fields: Record<string, unknown>) =>
    t.postbox('send', { agent_id: 'alice', from: alice, to: 'carol@partner.example', subject: 's', body: 'b', ...fields }, 'alice');
  const outboxSize = async () =>
    ((await t.postbox('list', { agent_id: 'alice', direction: 'out', limit: 500 }, 'alice')).body.messages as unknown[]).length;

  it('refuses CR or LF in to, from, subject and in_reply_to with 400 naming the field, and queues nothing', async () => {
    const before = await outboxSize();
    for (const [field, value] of [
      ['to', 'x@example.com\r\nBcc: victim@example.com'],
      ['to', 'x@example.com\nBcc: victim@example.com'],
      ['from', `${alice}\r\nBcc: victim@example.com`],
      ['subject', 'Hello\r\nBcc: victim@example.com'],
      ['subject', 'Hello\rthere'],
      ['in_reply_to', '<a@b>\r\nBcc: victim@example.com'],
    ] as const) {
      const response = await send({ [field]: value });
      expect(response.status, `${field}: ${JSON.stringify(value)}`).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      const fields = response.body.error.details.fields as Array<{ path: string; message: string }>;
      expect(fields).toContainEqual({ path: field, message: 'must not contain CR or LF' });
      expect(fields.every((entry) => entry.path === field)).toBe(true);
    }
    expect(await outboxSize()).toBe(before);
  });

  it('refuses an in_reply_to that is not one RFC 5322 msg-id', async () => {
    for (const value of [
      'a@b',
      '<a@b',
      '<a b@c>',
      '<a@b> <c@d>',
      '<<a@b>>',
      '<a<b@c>',
      '<ab>',
      '<a@b@c>',
      '<"a"@b>',
      '<>',
      `<${'x'.repeat(982)}@b>`, // 986 characters
    ]) {
      const response = await send({ in_reply_to: value });
      expect(response.status, value).toBe(400);
      expect(response.body.error.details.fields.map((entry: { path: string }) => entry.path)).toEqual(['in_reply_to']);
    }
  });

  it('sends a valid in_reply_to as In-Reply-To and References', async () => {
    for (const value of ['<CAH+x=Yz_1.2@mail.gmail.com>', '<20261122.abc$def@[192.0.2.1]>']) {
      const response = await send({ in_reply_to: value, subject: `re ${value}` });
      expect(response.status, value).toBe(200);
      const id = response.body.id as string;
      await waitFor(async () => sink.messages.some((message) => message.raw.includes(`<${id}@${MAIL_DOMAIN}>`)), 'relayed');
      const raw = sink.messages.find((message) => message.raw.includes(`<${id}@${MAIL_DOMAIN}>`))?.raw ?? '';
      expect(raw).toContain(`\r\nIn-Reply-To: ${value}\r\n`);
      expect(raw).toContain(`\r\nReferences: ${value}\r\n`);
    }
  });
});
