import { sqlDatabases } from '@agentinfra/testkit';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

const POSTMASTER = `postmaster@${MAIL_DOMAIN}`;

/** A plain-text message from `abuse-desk@isp.example` with `subject`. */
const report = (subject: string) =>
  [
    'From: Abuse desk <abuse-desk@isp.example>',
    `To: ${POSTMASTER}`,
    `Subject: ${subject}`,
    '',
    'Your server sent us a bounce loop.',
    '',
  ].join('\r\n');

describe.each(sqlDatabases())('postmaster mail (RFC 5321 §4.5.1) on $name', ({ create }) => {
  const t = usePostboxServer(create, { postboxConfig: { postmasterAgent: 'bob' } });
  const unset = usePostboxServer(create);
  let transport: ReturnType<typeof nodemailer.createTransport>;

  beforeAll(() => {
    transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true });
  });
  afterAll(() => {
    transport?.close();
  });

  it('delivers RCPT TO:<postmaster@domain> and RCPT TO:<Postmaster> (no domain) to postbox.postmasterAgent, with its rules', async () => {
    const rule = await t.postbox(
      'rule/put',
      { agent_id: 'bob', name: 'pm', match: { to_like: 'postmaster@%' }, actions: [{ move_to: 'postmaster' }] },
      'bob',
    );
    expect(rule.status).toBe(200);
    const withDomain = await transport.sendMail({
      envelope: { from: 'abuse-desk@isp.example', to: ['PostMaster@agents.test'] },
      raw: report('Loop 1'),
    });
    expect(withDomain.accepted).toEqual(['PostMaster@agents.test']);
    const bare = await transport.sendMail({ envelope: { from: 'abuse-desk@isp.example', to: ['Postmaster'] }, raw: report('Loop 2') });
    expect(bare.accepted).toEqual(['Postmaster']);
    expect(bare.response).toMatch(/^250 2\.0\.0 OK: queued as msg_/);
    const listed = await t.postbox('list', { agent_id: 'bob', limit: 500 }, 'bob');
    const mail = (listed.body.messages as Array<{ subject: string; to: string; folder: string }>).filter((item) =>
      item.subject.startsWith('Loop'),
    );
    expect(mail.map(({ subject, to, folder }) => ({ subject, to, folder }))).toEqual([
      { subject: 'Loop 1', to: POSTMASTER, folder: 'postmaster' },
      { subject: 'Loop 2', to: POSTMASTER, folder: 'postmaster' },
    ]);
    const alice = await t.postbox('list', { agent_id: 'alice', limit: 500 }, 'alice');
    expect(alice.body.messages).toEqual([]);
  });

  it('takes /ingest to postmaster@domain too, and still refuses other role addresses and the postmaster of another domain', async () => {
    const ingested = await t.server.call(
      'agent-postbox/ingest',
      { to: POSTMASTER, from: 'abuse-desk@isp.example', subject: 'Loop 3', body: 'again', headers: {} },
      t.bridge,
    );
    expect(ingested.status).toBe(200);
    expect(ingested.body.agent_id).toBe('bob');
    for (const address of [`abuse@${MAIL_DOMAIN}`, 'postmaster@other.example']) {
      const refused = await transport
        .sendMail({ envelope: { from: 'a@isp.example', to: [address] }, raw: report('No') })
        .catch((error: { response: string }) => error);
      expect((refused as { response: string }).response).toMatch(/^550 5\.1\.1/);
    }
  });

  it('refuses postmaster with 550 when no postmasterAgent is configured', async () => {
    const other = nodemailer.createTransport({ host: '127.0.0.1', port: unset.smtpPort, secure: false, ignoreTLS: true });
    const refused = await other
      .sendMail({ envelope: { from: 'a@isp.example', to: ['Postmaster'] }, raw: report('No') })
      .catch((error: { response: string }) => error);
    other.close();
    expect((refused as { response: string }).response).toBe('550 5.1.1 <postmaster>: no such mailbox here');
  });
});
