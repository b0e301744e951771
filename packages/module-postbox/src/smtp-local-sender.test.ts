import type { BlobStore } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_DOMAIN, type PostboxTestServer, startPostboxTestServer } from './test-support/postbox-test-server.js';
import { smtpClient } from './test-support/smtp-client.js';

const alice = `alice@${MAIL_DOMAIN}`;
const bob = `bob@${MAIL_DOMAIN}`;

/** A plain-text message with the given header lines, ready for DATA (dot-terminated). */
const message = (headers: readonly string[], body: string) =>
  [...headers, `To: ${alice}`, 'Subject: Payment details changed', '', body, '.', ''].join('\r\n');

// The bundled MTA takes mail from anyone: a sender address of this server (an agent's or the postmaster's) is forged.
describe.each(sqlDatabases())('SMTP mail from an address of this server on $name', ({ create }) => {
  let t: PostboxTestServer;
  let cleanup: () => Promise<void>;
  /** Blob keys written and not deleted since the server started. */
  const liveBlobs = new Set<string>();
  const recordBlobs = (store: BlobStore): BlobStore => ({
    ...store,
    async put(options) {
      const result = await store.put(options);
      liveBlobs.add(options.key);
      return result;
    },
    async delete(options) {
      const result = await store.delete(options);
      for (const key of options.keys) liveBlobs.delete(key);
      return result;
    },
  });

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startPostboxTestServer({ db: fixture.db, postboxConfig: { postmasterAgent: 'bob' }, wrapBlobStore: recordBlobs });
  });

  afterAll(async () => {
    await t?.stop();
    await cleanup?.();
  });

  /** Subjects of Alice's inbox. */
  const inbox = async () => {
    const listed = await t.postbox('list', { agent_id: 'alice', limit: 500 }, 'alice');
    expect(listed.status).toBe(200);
    return (listed.body.messages as Array<{ subject: string; from: string }>).map(({ subject, from }) => ({ subject, from }));
  };

  /** One session: EHLO, MAIL FROM `envelope`, RCPT TO Alice, DATA `raw`; each reply's first line (`''` for steps not reached). */
  async function session(envelope: string, raw: string) {
    const client = await smtpClient(t.smtpPort);
    try {
      await client.command('EHLO client.example');
      const mail = await client.command(`MAIL FROM:<${envelope}>`);
      if (!mail.startsWith('250')) return { mail, rcpt: await client.command(`RCPT TO:<${alice}>`), data: '' };
      const rcpt = await client.command(`RCPT TO:<${alice}>`);
      expect(await client.command('DATA')).toMatch(/^354/);
      client.send(raw);
      return { mail, rcpt, data: await client.reply() };
    } finally {
      client.end();
    }
  }

  // smtp-server itself refuses a domain with a trailing dot in MAIL FROM (501); the header test has one.
  it('refuses an envelope sender of this server at MAIL FROM with 550 5.7.1, in any case or quoting', async () => {
    const before = await inbox();
    for (const [envelope, local] of [
      [bob, bob],
      ['Bob@AGENTS.test', bob],
      [`"bob"@${MAIL_DOMAIN}`, bob],
      [alice, alice],
      [`Postmaster@${MAIL_DOMAIN}`, `postmaster@${MAIL_DOMAIN}`],
    ]) {
      const replies = await session(envelope as string, message([`From: ${envelope}`], 'New account number attached.'));
      expect(replies.mail, envelope).toBe(
        `550 5.7.1 MAIL FROM <${local}> is an address of this server; mail from it is not accepted over SMTP\r\n`,
      );
      // No transaction was opened: a recipient needs a MAIL command first.
      expect(replies.rcpt).toMatch(/^503/);
    }
    expect(await inbox()).toEqual(before);
  });

  it('refuses a From or Sender header of this server after DATA with 550 5.7.1 and stores nothing, raw bytes included', async () => {
    const before = await inbox();
    const blobsBefore = new Set(liveBlobs);
    for (const [headers, field, local] of [
      [['From: Bob <bob@agents.test>'], 'From', bob],
      [['From: "Accounts" <accounts@vendor.example>, BOB@Agents.Test'], 'From', bob],
      [['From: "bob"@agents.test.'], 'From', bob],
      [['From: team: x@vendor.example, postmaster@agents.test;'], 'From', `postmaster@${MAIL_DOMAIN}`],
      [['From: Accounts <accounts@vendor.example>', `Sender: ${bob}`], 'Sender', bob],
    ] as const) {
      const replies = await session('accounts@vendor.example', message(headers, `Pay the new account. ${headers.join(' ')}`));
      expect(replies.mail).toMatch(/^250/);
      expect(replies.rcpt).toMatch(/^250/);
      expect(replies.data).toBe(`550 5.7.1 ${field} <${local}> is an address of this server; mail from it is not accepted over SMTP\r\n`);
    }
    expect(await inbox()).toEqual(before);
    expect(liveBlobs).toEqual(blobsBefore);
  });

  it('still accepts external senders and bounces (MAIL FROM:<>)', async () => {
    const external = await session('accounts@vendor.example', message(['From: Accounts <accounts@vendor.example>'], 'Invoice 7.'));
    expect(external.data).toMatch(/^250 2\.0\.0 OK: queued as msg_/);
    // A look-alike domain is not this server's.
    const lookAlike = await session(`bob@${MAIL_DOMAIN}.example`, message([`From: bob@${MAIL_DOMAIN}.example`], 'Invoice 8.'));
    expect(lookAlike.data).toMatch(/^250 2\.0\.0 OK: queued as msg_/);
    const bounce = await session('', message(['From: Mail Delivery System <MAILER-DAEMON@relay.example>'], 'Undeliverable: Invoice 7.'));
    expect(bounce.mail).toMatch(/^250/);
    expect(bounce.data).toMatch(/^250 2\.0\.0 OK: queued as msg_/);
    expect((await inbox()).slice(-3)).toEqual([
      { subject: 'Payment details changed', from: '"Accounts" <accounts@vendor.example>' },
      { subject: 'Payment details changed', from: `bob@${MAIL_DOMAIN}.example` },
      { subject: 'Payment details changed', from: '"Mail Delivery System" <MAILER-DAEMON@relay.example>' },
    ]);
  });
});
