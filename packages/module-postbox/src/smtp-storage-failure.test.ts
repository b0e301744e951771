import { writeFile } from 'node:fs/promises';
import { sqlDatabases } from '@agentinfra/testkit';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

// Regression: a raw-MIME write that failed while mailparser was still reading the message was a
// promise rejection nobody handled yet, which ends a Node process (`--unhandled-rejections=throw`).
describe.each(sqlDatabases())('bundled SMTP server with a failing blob store on $name', ({ create }) => {
  let failure: Error | null = new Error('The blob store is unreachable');

  const t = usePostboxServer(create, {
    wrapBlobStore: (store) => ({
      ...store,
      async put(options) {
        if (failure === null) return store.put(options);
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw failure;
      },
    }),
  });

  it('answers 451 (452 when the disk is full) and stores nothing when the raw message cannot be written, then accepts the retry', async () => {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true });
    const mail = {
      from: 'news@shop.example',
      to: `alice@${MAIL_DOMAIN}`,
      subject: 'Your order shipped',
      text: 'Your order is on its way.\n'.repeat(2_000),
      messageId: '<storage-failure@shop.example>',
    };
    try {
      const refused = await transport.sendMail(mail).then(
        () => null,
        (error: { responseCode?: number }) => error,
      );
      expect(refused?.responseCode).toBe(451);
      const listed = async () => (await t.postbox('list', { agent_id: 'alice', limit: 500 }, 'alice')).body.messages as unknown[];
      expect(await listed()).toEqual([]);
      // A full disk (a real ENOSPC, from /dev/full) is RFC 3463's 4.3.1 "mail system full".
      failure = await writeFile('/dev/full', 'mail').then(
        () => null,
        (error: Error) => error,
      );
      const full = await transport.sendMail(mail).then(
        () => null,
        (error: { responseCode?: number; response?: string }) => error,
      );
      expect(full?.responseCode).toBe(452);
      expect(full?.response).toMatch(/^452 4\.3\.1 /);
      expect(await listed()).toEqual([]);
      failure = null;
      const accepted = await transport.sendMail(mail);
      expect(accepted.response).toMatch(/^250 .*queued as msg_/);
      expect(await listed()).toHaveLength(1);
    } finally {
      transport.close();
    }
  });
});
