import { sqlDatabases } from '@agentinfra/testkit';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { postboxJobs } from './jobs/postbox-jobs.js';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

const DAY = 86_400_000;

describe.each(sqlDatabases())('retention on $name', ({ create }) => {
  const t = usePostboxServer(create);

  it('is a daily scheduled job', () => {
    expect(postboxJobs.find((job) => job.name === 'postbox.retention')?.schedule).toEqual({ cron: '30 3 * * *' });
  });

  it('deletes messages older than postbox_retention_days and the raw MIME no remaining message refers to', async () => {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true });
    const send = (messageId: string, to: string[]) =>
      transport.sendMail({
        from: 'a@example.org',
        to,
        subject: messageId,
        text: 'retention test',
        messageId: `<${messageId}@example.org>`,
        date: new Date('2026-01-01T00:00:00Z'),
      });
    await send('old-only', [`alice@${MAIL_DOMAIN}`]);
    await send('shared', [`alice@${MAIL_DOMAIN}`, `bob@${MAIL_DOMAIN}`]);
    await send('fresh', [`alice@${MAIL_DOMAIN}`]);
    transport.close();
    const external = await t.postbox(
      'ingest',
      {
        to: `bob@${MAIL_DOMAIN}`,
        from: 'x@example.org',
        subject: 'external',
        body: 'b',
        headers: { 'message-id': '<ext@example.org>' },
        mime_ref: 'postbox/mime/not-mine.eml',
      },
      t.bridge,
    );
    expect(external.status).toBe(200);
    const rows = (await t.db.knex('postbox_messages').select('id', 'subject', 'to_address', 'mime_ref')) as Array<{
      id: string;
      subject: string;
      to_address: string;
      mime_ref: string;
    }>;
    const bySubject = (subject: string, to = `alice@${MAIL_DOMAIN}`) =>
      rows.find((row) => row.subject === subject && row.to_address === to)!;
    const old = [bySubject('old-only'), bySubject('shared'), bySubject('external', `bob@${MAIL_DOMAIN}`)];
    await t.db
      .knex('postbox_messages')
      .whereIn(
        'id',
        old.map((row) => row.id),
      )
      .update({ created_at: Date.now() - 3 * DAY });
    expect((await t.server.call('agent-identity/settings/set', { key: 'postbox_retention_days', value: 2 }, t.bridge)).status).toBe(200);

    // A run whose job signal aborted (its timeout passed) stops before the next batch: here, before the first.
    const aborted = new AbortController();
    aborted.abort(new Error('Timed out after 600000 ms.'));
    const job = postboxJobs.find((candidate) => candidate.name === 'postbox.retention');
    await expect(job?.run({ payload: null, attempt: 1, scheduledFor: null, signal: aborted.signal, service: t.service })).rejects.toThrow(
      'Timed out after 600000 ms.',
    );
    expect(await t.db.knex('postbox_messages').count({ n: '*' }).first()).toEqual({ n: rows.length });

    const swept = await t.service.sweepRetention();
    expect(swept).toEqual({ messages: 3, blobs: 1 });
    const left = (await t.db.knex('postbox_messages').select('subject', 'to_address')) as Array<{ subject: string; to_address: string }>;
    expect(left.map((row) => `${row.subject}→${row.to_address}`).sort()).toEqual([
      `fresh→alice@${MAIL_DOMAIN}`,
      `shared→bob@${MAIL_DOMAIN}`,
    ]);
    expect(await t.blobStore.stat({ key: bySubject('old-only').mime_ref })).toBeNull();
    expect(await t.blobStore.stat({ key: bySubject('shared').mime_ref })).not.toBeNull();
    expect(await t.blobStore.stat({ key: bySubject('fresh').mime_ref })).not.toBeNull();
    expect(await t.service.sweepRetention()).toEqual({ messages: 0, blobs: 0 });
  });
});
