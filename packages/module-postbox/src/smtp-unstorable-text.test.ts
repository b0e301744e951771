import { sqlDatabases } from '@agentinfra/testkit';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { storableText } from './mime-message.js';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

describe('storableText', () => {
  it('replaces NUL and unpaired surrogates with U+FFFD and keeps pairs', () => {
    expect(storableText('a\u0000b')).toBe('a\ufffdb');
    expect(storableText('x\ud800y\udc00z')).toBe('x\ufffdy\ufffdz');
    expect(storableText('smile \u{1f600}')).toBe('smile \u{1f600}');
  });
});

describe.each(sqlDatabases())('mail holding NUL over SMTP on $name', ({ create }) => {
  const t = usePostboxServer(create, { postboxConfig: { smtp: { port: 'auto' } } });

  it('is stored with U+FFFD in its place, on every engine, instead of 451 forever', async () => {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true });
    try {
      const raw = [
        'From: "Nul\u0000Name" <sender@ext.example>',
        `To: alice@${MAIL_DOMAIN}`,
        'Subject: =?utf-8?Q?before=00after?=',
        'Message-ID: <nul-1@ext.example>',
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: quoted-printable',
        '',
        'body=00text',
        '',
      ].join('\r\n');
      const sent = await transport.sendMail({ envelope: { from: 'sender@ext.example', to: [`alice@${MAIL_DOMAIN}`] }, raw });
      expect(sent.response).toMatch(/^250 /);
    } finally {
      transport.close();
    }
    const listed = await t.postbox('list', { agent_id: 'alice', limit: 10 }, 'alice');
    const message = (listed.body.messages as Array<{ subject: string; body: string; from: string }>).find((item) =>
      item.subject.startsWith('before'),
    );
    expect(message?.subject).toBe('before\ufffdafter');
    expect(message?.body).toContain('body\ufffdtext');
  });
});
