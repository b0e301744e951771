import { sqlDatabases } from '@agentinfra/testkit';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

/** A Message-ID the postbox made: 32 hex characters at the mail domain. */
const GENERATED = new RegExp(`^<[0-9a-f]{32}@${MAIL_DOMAIN.replace('.', '\\.')}>$`);

describe.each(sqlDatabases())('mail without a Message-ID on $name', ({ create }) => {
  const t = usePostboxServer(create);

  /** The message-id header `agent` sees on its message `id`. */
  const messageIdOf = async (agent: 'alice' | 'bob', id: string) => {
    const listed = await t.postbox('list', { agent_id: agent, limit: 500 }, agent);
    const message = (listed.body.messages as Array<{ id: string; headers: Record<string, string> }>).find((item) => item.id === id);
    return message?.headers['message-id'];
  };

  it('/ingest gives it one made from the request: the same for every recipient and a retried request, which is stored once', async () => {
    const request = (to: string, body = 'The build of main passed.') => ({
      to,
      from: 'ci@builds.example',
      subject: 'Build 7781',
      body,
      headers: { date: 'Mon, 04 May 2026 09:15:00 +0000' },
    });
    const first = await t.postbox('ingest', request(`alice@${MAIL_DOMAIN}`), t.bridge);
    expect(first.status).toBe(200);
    const messageId = await messageIdOf('alice', first.body.id);
    expect(messageId).toMatch(GENERATED);

    const retried = await t.postbox('ingest', request(`alice@${MAIL_DOMAIN}`), t.bridge);
    expect(retried.body).toEqual(first.body);
    const bobs = await t.postbox('ingest', request(`bob@${MAIL_DOMAIN}`), t.bridge);
    expect(bobs.status).toBe(200);
    expect(await messageIdOf('bob', bobs.body.id)).toBe(messageId);

    const other = await t.postbox('ingest', request(`alice@${MAIL_DOMAIN}`, 'The build of main failed.'), t.bridge);
    expect(other.body.id).not.toBe(first.body.id);
    expect(await messageIdOf('alice', other.body.id)).toMatch(GENERATED);
    expect(await messageIdOf('alice', other.body.id)).not.toBe(messageId);
  });

  it('the bundled MTA gives it one of the same form, the same for every recipient and a retransmission', async () => {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true });
    const raw = ['From: ci@builds.example', `To: alice@${MAIL_DOMAIN}`, 'Subject: Build 7782', '', 'The build of main passed.', ''].join(
      '\r\n',
    );
    const send = () =>
      transport.sendMail({ envelope: { from: 'ci@builds.example', to: [`alice@${MAIL_DOMAIN}`, `bob@${MAIL_DOMAIN}`] }, raw });
    try {
      const first = await send();
      const again = await send();
      expect(again.response).toBe(first.response);
      const [aliceId, bobId] = [...first.response.matchAll(/msg_[A-Za-z0-9_-]+/g)].map((match) => match[0]);
      const messageId = await messageIdOf('alice', aliceId as string);
      expect(messageId).toMatch(GENERATED);
      expect(await messageIdOf('bob', bobId as string)).toBe(messageId);
    } finally {
      transport.close();
    }
  });
});
