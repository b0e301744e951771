import { embeddedDatabase } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { liveBlobs } from './test-support/live-blobs.js';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { smtpClient } from './test-support/smtp-client.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

const alice = `alice@${MAIL_DOMAIN}`;
const bob = `bob@${MAIL_DOMAIN}`;

/** A plain-text message with the given header lines, ready for DATA (dot-terminated). */
const message = (headers: readonly string[], body: string) =>
  [...headers, `To: ${alice}`, 'Subject: Payment details changed', '', body, '.', ''].join('\r\n');

// The bundled MTA takes mail from anyone: a sender address of this server (an agent's or the postmaster's) is forged.
// SQLite only: the checks run in the SMTP session on the envelope and header (the one query, a `whereIn` of lower-cased
// addresses on postbox_addresses, is plain SQL); storing mail from external senders runs on both engines in smtp-ingest.test.ts.
describe.each(embeddedDatabase())('SMTP mail from an address of this server on $name', ({ create }) => {
  /** Blob keys written and not deleted since the server started. */
  const { keys: liveBlobKeys, wrap: recordBlobs } = liveBlobs();
  const t = usePostboxServer(create, { postboxConfig: { postmasterAgent: 'bob' }, wrapBlobStore: recordBlobs });

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
    const blobsBefore = new Set(liveBlobKeys);
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
    expect(liveBlobKeys).toEqual(blobsBefore);
  });

  // The postbox is the mail domain's only MTA: RCPT TO any address there that no agent holds is refused, so no one sends as one.
  it('refuses any address at the mail domain, held or not, in MAIL FROM, From and Sender with 550 5.7.1', async () => {
    const before = await inbox();
    const blobsBefore = new Set(liveBlobKeys);
    const unassigned = await smtpClient(t.smtpPort);
    try {
      await unassigned.command('EHLO client.example');
      await unassigned.command('MAIL FROM:<accounts@vendor.example>');
      expect(await unassigned.command(`RCPT TO:<abuse@${MAIL_DOMAIN}>`)).toBe(`550 5.1.1 <abuse@${MAIL_DOMAIN}>: no such mailbox here\r\n`);
    } finally {
      unassigned.end();
    }
    for (const [envelope, local] of [
      [`abuse@${MAIL_DOMAIN}`, `abuse@${MAIL_DOMAIN}`],
      ['Hostmaster@AGENTS.TEST', `hostmaster@${MAIL_DOMAIN}`],
      [`"billing"@${MAIL_DOMAIN}`, `billing@${MAIL_DOMAIN}`],
      [`nobody-holds-this@${MAIL_DOMAIN}`, `nobody-holds-this@${MAIL_DOMAIN}`],
    ]) {
      const replies = await session(envelope as string, message([`From: ${envelope}`], 'Reset your password.'));
      expect(replies.mail, envelope).toBe(
        `550 5.7.1 MAIL FROM <${local}> is an address of this server; mail from it is not accepted over SMTP\r\n`,
      );
    }
    for (const [headers, field, local] of [
      [['From: Security Team <security@agents.test>'], 'From', `security@${MAIL_DOMAIN}`],
      [['From: IT <helpdesk@AGENTS.test.>'], 'From', `helpdesk@${MAIL_DOMAIN}`],
      // Full-width letters: the same domain once mapped to ASCII (UTS #46), as a mail client resolves it.
      [['From: IT <helpdesk@\uff41\uff47\uff45\uff4e\uff54\uff53.test>'], 'From', `helpdesk@${MAIL_DOMAIN}`],
      [['From: Accounts <accounts@vendor.example>', 'Sender: noreply@agents.test'], 'Sender', `noreply@${MAIL_DOMAIN}`],
    ] as const) {
      const replies = await session('accounts@vendor.example', message(headers, `Reset your password. ${headers.join(' ')}`));
      expect(replies.rcpt).toMatch(/^250/);
      expect(replies.data, headers.join(' ')).toBe(
        `550 5.7.1 ${field} <${local}> is an address of this server; mail from it is not accepted over SMTP\r\n`,
      );
    }
    expect(await inbox()).toEqual(before);
    expect(liveBlobKeys).toEqual(blobsBefore);
  });

  // RFC 5322 §3.6: one From, at most one Sender. Only the first was checked, and a second one survived in the raw message.
  it('refuses a header with more than one From or Sender field with 550 5.6.0 and stores nothing', async () => {
    const before = await inbox();
    const blobsBefore = new Set(liveBlobKeys);
    const twoFrom = '550 5.6.0 Message has 2 From header fields; exactly one is allowed (RFC 5322 section 3.6)\r\n';
    for (const [headers, reply] of [
      [['From: Accounts <accounts@vendor.example>', `From: Bob <${bob}>`], twoFrom],
      [['From: Accounts <accounts@vendor.example>', 'FROM : billing@vendor.example'], twoFrom],
      // mailparser reads a first line that begins with `From ` as an mbox separator, not as a field.
      [[`From : ${bob}`, 'From: Accounts <accounts@vendor.example>'], twoFrom],
      [
        [
          'From: Accounts <accounts@vendor.example>',
          'Sender: billing@vendor.example',
          'sender: billing@vendor.example',
          'Sender:\r\n  x@vendor.example',
        ],
        '550 5.6.0 Message has 3 Sender header fields; at most one is allowed (RFC 5322 section 3.6)\r\n',
      ],
    ] as const) {
      const replies = await session('accounts@vendor.example', message(headers, `Pay the new account. ${headers.join(' ')}`));
      expect(replies.rcpt).toMatch(/^250/);
      expect(replies.data, headers.join(' ')).toBe(reply);
    }
    expect(await inbox()).toEqual(before);
    expect(liveBlobKeys).toEqual(blobsBefore);
  });

  it('checks a From field mailparser does not read and every address of a From longer than the stored text', async () => {
    const before = await inbox();
    const refusal = `550 5.7.1 From <${bob}> is an address of this server; mail from it is not accepted over SMTP\r\n`;
    // The only From, on the first line with a space before its colon: mailparser skips it (the stored `from` is empty).
    const mboxLike = await session('accounts@vendor.example', message([`From : Bob <${bob}>`], 'Pay the new account.'));
    expect(mboxLike.data).toBe(refusal);
    // The stored `from` keeps 16,384 characters; the local address comes after them (99 mailboxes with long names).
    const others = Array.from(
      { length: 99 },
      (_, index) => `"Clerk ${index} ${'of accounts '.repeat(15)}" <clerk${index}@vendor.example>`,
    ).join(',\r\n ');
    const long = await session('accounts@vendor.example', message([`From: ${others},\r\n ${bob}`], 'Pay the new account.'));
    expect(long.data).toBe(refusal);
    expect(await inbox()).toEqual(before);
  });

  // Review: every mailbox of an uncut From was looked up, 500 a query: one message of 1 MiB of addresses cost hundreds.
  it('refuses a From or Sender listing more than 100 mailboxes with 550 5.6.0 before looking any up', async () => {
    const before = await inbox();
    const many = Array.from({ length: 101 }, (_, index) => `c${index}@v.example`).join(', ');
    const crowded = await session('accounts@vendor.example', message([`From: ${many}`], 'Invoice 10.'));
    expect(crowded.data).toBe('550 5.6.0 Message From field lists 101 mailboxes; at most 100 are accepted\r\n');
    const hundred = Array.from({ length: 100 }, (_, index) => `c${index}@v.example`).join(', ');
    const sender = await session('accounts@vendor.example', message([`From: ${hundred}`, `Sender: ${many}`], 'Invoice 11.'));
    expect(sender.data).toBe('550 5.6.0 Message Sender field lists 101 mailboxes; at most 100 are accepted\r\n');
    expect(await inbox()).toEqual(before);
    const fine = await session('accounts@vendor.example', message([`From: ${hundred}`], 'Invoice 12.'));
    expect(fine.data).toMatch(/^250 2\.0\.0 OK: queued as msg_/);
  });

  it('still accepts external senders and bounces (MAIL FROM:<>)', async () => {
    const external = await session('accounts@vendor.example', message(['From: Accounts <accounts@vendor.example>'], 'Invoice 7.'));
    expect(external.data).toMatch(/^250 2\.0\.0 OK: queued as msg_/);
    // A look-alike domain is not this server's.
    const lookAlike = await session(`bob@${MAIL_DOMAIN}.example`, message([`From: bob@${MAIL_DOMAIN}.example`], 'Invoice 8.'));
    expect(lookAlike.data).toMatch(/^250 2\.0\.0 OK: queued as msg_/);
    // Nor is a subdomain of the mail domain.
    const subdomain = await session(`billing@mail.${MAIL_DOMAIN}`, message([`From: billing@mail.${MAIL_DOMAIN}`], 'Invoice 9.'));
    expect(subdomain.data).toMatch(/^250 2\.0\.0 OK: queued as msg_/);
    const bounce = await session('', message(['From: Mail Delivery System <MAILER-DAEMON@relay.example>'], 'Undeliverable: Invoice 7.'));
    expect(bounce.mail).toMatch(/^250/);
    expect(bounce.data).toMatch(/^250 2\.0\.0 OK: queued as msg_/);
    expect((await inbox()).slice(-4)).toEqual([
      { subject: 'Payment details changed', from: '"Accounts" <accounts@vendor.example>' },
      { subject: 'Payment details changed', from: `bob@${MAIL_DOMAIN}.example` },
      { subject: 'Payment details changed', from: `billing@mail.${MAIL_DOMAIN}` },
      { subject: 'Payment details changed', from: '"Mail Delivery System" <MAILER-DAEMON@relay.example>' },
    ]);
  });
});
