import { embeddedDatabase } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { liveBlobs } from './test-support/live-blobs.js';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { smtpClient } from './test-support/smtp-client.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

const alice = `alice@${MAIL_DOMAIN}`;
const bob = `bob@${MAIL_DOMAIN}`;
const bareCrRefusal = '550 5.6.0 Message header has a bare CR (a CR not followed by LF); RFC 5322 section 2.2 allows CR only in CRLF\r\n';

/** A message with the given header lines and body, joined by CRLF, ready for DATA (dot-terminated). */
const message = (headers: readonly string[], body: string) => [...headers, '', body, '.', ''].join('\r\n');

// mailparser and the sender check end header lines at LF only; Python's email package and some mail clients end one at
// a bare CR too, so `Subject: x\rFrom: bob@…` was a Subject to the check and a From of this server to them.
// SQLite only: the refusal is decided on the header bytes in the SMTP session, and what is stored goes through the
// same inserts as any SMTP mail (on both engines in smtp-ingest.test.ts).
describe.each(embeddedDatabase())('SMTP mail with a bare CR on $name', ({ create }) => {
  /** Blob keys written and not deleted since the server started. */
  const { keys: liveBlobKeys, wrap: recordBlobs } = liveBlobs();
  const t = usePostboxServer(create, { wrapBlobStore: recordBlobs });

  /** Alice's inbox: subject, from and body of each message, and its raw MIME as stored. */
  const inbox = async () => {
    const listed = await t.postbox('list', { agent_id: 'alice', limit: 500 }, 'alice');
    expect(listed.status).toBe(200);
    const messages = listed.body.messages as Array<{ subject: string; from: string; body: string; mime_ref: string }>;
    return Promise.all(
      messages.map(async ({ subject, from, body, mime_ref }) => {
        const chunks: Buffer[] = [];
        for await (const chunk of (await t.blobStore.get({ key: mime_ref })) ?? []) chunks.push(chunk as Buffer);
        return { subject, from, body, raw: Buffer.concat(chunks).toString('latin1') };
      }),
    );
  };

  /** One session from an outside sender to Alice: the reply to DATA's content. */
  async function send(raw: string) {
    const client = await smtpClient(t.smtpPort);
    try {
      await client.command('EHLO client.example');
      expect(await client.command('MAIL FROM:<accounts@vendor.example>')).toMatch(/^250/);
      expect(await client.command(`RCPT TO:<${alice}>`)).toMatch(/^250/);
      expect(await client.command('DATA')).toMatch(/^354/);
      client.send(raw);
      return await client.reply();
    } finally {
      client.end();
    }
  }

  it('refuses a header with a bare CR with 550 5.6.0 and stores nothing, raw bytes included', async () => {
    const before = await inbox();
    const blobsBefore = new Set(liveBlobKeys);
    const to = `To: ${alice}`;
    for (const headers of [
      // A second From, naming an agent of this server, that only a reader splitting at CR sees.
      ['From: Accounts <accounts@vendor.example>', to, `Subject: Invoice\rFrom: Bob <${bob}>`],
      // The only From: the postbox stored an empty sender, a mail client shows Bob.
      [to, `Subject: Invoice\rFrom: Bob <${bob}>`],
      // CR CR LF: to such a reader an empty line, so the header ends there.
      ['From: Accounts <accounts@vendor.example>', to, 'Subject: Invoice\r'],
      // In a folded field, and as a line's first byte.
      ['From: Accounts <accounts@vendor.example>', to, 'Subject: Invoice\r\n 10\rSender: bob@agents.test'],
      ['From: Accounts <accounts@vendor.example>', to, 'Subject: Invoice', `\rFrom: ${bob}`],
    ]) {
      expect(await send(message(headers, 'Pay the new account.')), JSON.stringify(headers)).toBe(bareCrRefusal);
    }
    expect(await inbox()).toEqual(before);
    expect(liveBlobKeys).toEqual(blobsBefore);
  });

  // smtp-server passes DATA on as sent (only dot-stuffing is undone): bare CRs and bare LFs reach the postbox.
  it('reads a bare LF as a line end, and accepts bare CRs and LFs in the body, storing the bytes as sent', async () => {
    // Every reader ends a header line at a bare LF: the check sees the second From too.
    expect(await send(message(['From: Accounts <accounts@vendor.example>', `Subject: Invoice\nFrom: Bob <${bob}>`], 'Pay.'))).toBe(
      '550 5.6.0 Message has 2 From header fields; exactly one is allowed (RFC 5322 section 3.6)\r\n',
    );
    const lfHeader = ['From: Accounts <accounts@vendor.example>', `To: ${alice}`, 'Subject: LF lines', '', 'Invoice 11.'].join('\n');
    expect(await send(`${lfHeader}\r\n.\r\n`)).toMatch(/^250 2\.0\.0 OK: queued as msg_/);
    // After the header, a bare CR names no field: the sender is the one From whoever reads the message.
    const crBody = message(
      ['From: Accounts <accounts@vendor.example>', `To: ${alice}`, 'Subject: CR body'],
      `Invoice 12.\rFrom: Bob <${bob}>\r\rTotal\n12.`,
    );
    expect(await send(crBody)).toMatch(/^250 2\.0\.0 OK: queued as msg_/);
    expect((await inbox()).slice(-2)).toEqual([
      {
        subject: 'LF lines',
        from: '"Accounts" <accounts@vendor.example>',
        body: 'Invoice 11.\n',
        raw: `${lfHeader}\r\n`,
      },
      {
        subject: 'CR body',
        from: '"Accounts" <accounts@vendor.example>',
        body: expect.stringContaining('Invoice 12.'),
        raw: crBody.slice(0, -'.\r\n'.length),
      },
    ]);
  });
});
