import { createHash } from 'node:crypto';
import type { BlobStore } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

const alice = `alice@${MAIL_DOMAIN}`;
const bob = `bob@${MAIL_DOMAIN}`;
const rawMail = (received: string) =>
  `${received}From: Bank <statements@bank.example>\r\nTo: ${alice}, ${bob}\r\nSubject: Your statement\r\n` +
  'Message-ID: <stmt-race@bank.example>\r\n\r\nYour statement is ready.\r\n';
const keyOf = (raw: string) => `postbox/mime/${createHash('sha256').update(raw).digest('hex')}.eml`;

// A delivery whose every copy is a duplicate removes its raw blob unless a stored message refers to it; the same
// bytes may meanwhile be stored for another recipient by a second session whose message is not committed yet.
describe.each(sqlDatabases())('raw MIME of duplicate SMTP deliveries on $name', ({ create }) => {
  /** The key whose first write is held (written, not yet answered) until a delete is asked for, or 2 s. */
  let heldKey: string | null = null;
  let written: () => void = () => undefined;
  let deleteAsked: () => void = () => undefined;

  const holdFirstWrite = (store: BlobStore): BlobStore => ({
    ...store,
    async put(options) {
      if (options.key !== heldKey) return store.put(options);
      heldKey = null;
      const result = await store.put(options);
      const asked = new Promise<void>((resolve) => {
        deleteAsked = resolve;
      });
      written();
      await Promise.race([asked, new Promise((resolve) => setTimeout(resolve, 2_000))]);
      return result;
    },
    async delete(options) {
      deleteAsked();
      return store.delete(options);
    },
  });
  const t = usePostboxServer(create, { wrapBlobStore: holdFirstWrite });

  it('keeps the raw bytes that another session is still storing for a new recipient', async () => {
    const transport = () => nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true });
    const [first, forBob, forAlice] = [transport(), transport(), transport()];
    try {
      await first.sendMail({ envelope: { from: 'x@bank.example', to: [alice] }, raw: rawMail('') });
      const relayed = rawMail('Received: from relay-2.bank.example by mx.agents.test\r\n');
      heldKey = keyOf(relayed);
      const isWritten = new Promise<void>((resolve) => {
        written = resolve;
      });
      const bobDelivery = forBob.sendMail({ envelope: { from: 'x@bank.example', to: [bob] }, raw: relayed });
      await isWritten;
      // Alice already has this message: her copy is a duplicate while Bob's is written but not yet stored.
      const duplicate = await forAlice.sendMail({ envelope: { from: 'x@bank.example', to: [alice] }, raw: relayed });
      expect(duplicate.response).toMatch(/queued as msg_/);
      expect((await bobDelivery).response).toMatch(/queued as msg_/);
      expect((await t.postbox('list', { agent_id: 'bob' }, 'bob')).body.messages).toHaveLength(1);
      expect(await t.blobStore.stat({ key: keyOf(relayed) })).not.toBeNull();
    } finally {
      for (const connection of [first, forBob, forAlice]) connection.close();
    }
  });
});
