import { randomUUID } from 'node:crypto';
import { sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { lockMessageOrder } from './message-order-lock.js';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

const postgres = sqlDatabases().find((entry) => entry.name === 'postgres');

// Review: with two writers on PostgreSQL (replicas, or batches in flight), an agent's seq 7 could commit before its
// seq 5; a poller that read 7 stepped past 5 for good (128 of 600 messages in one run of two replicas).
// SQLite has one writer at a time, and a transaction held here would hold its one connection.
describe.runIf(postgres)('postbox /list while another writer stores mail on postgres', () => {
  const t = usePostboxServer(() => (postgres as NonNullable<typeof postgres>).create(), { jobsEnabled: false });

  const ingest = (subject: string) =>
    t.postbox(
      'ingest',
      { to: `alice@${MAIL_DOMAIN}`, from: 'sender@example.net', subject, body: 'b', headers: { 'message-id': `<${subject}@example.net>` } },
      t.bridge,
    );
  const poll = async (since: string | null) => {
    const page = (await t.postbox('list', { agent_id: 'alice', since, limit: 500 }, 'alice')).body;
    return { ids: (page.messages as Array<{ id: string }>).map((message) => message.id), cursor: page.next_cursor as string | null };
  };

  it('never lets a poller step past a message that another writer is still committing', async () => {
    const first = await ingest(`first-${randomUUID()}`);
    expect(first.status).toBe(200);
    let cursor = (await poll(null)).cursor;
    const seen: string[] = [];

    // Another replica's batch: it took alice's lock and inserted (drawing its seq), and has not committed yet.
    const inFlightId = `msg_${randomUUID().replaceAll('-', '')}`;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inserted = () => {};
    const insertedNow = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const now = Date.now();
    const other = t.db.knex.transaction(async (trx) => {
      await lockMessageOrder(t.db, trx, ['alice']);
      await trx('postbox_messages').insert({
        id: inFlightId,
        agent_id: 'alice',
        direction: 'in',
        folder: 'inbox',
        to_address: `alice@${MAIL_DOMAIN}`,
        from_address: 'other@example.net',
        subject: 'in flight',
        body: 'b',
        html: null,
        headers: '{}',
        attachments: '[]',
        dedupe_key: null,
        mime_ref: null,
        mime_owned: false,
        injection_score: 0,
        quarantined: false,
        read_at: null,
        status: 'received',
        error: null,
        created_at: now,
        updated_at: now,
        sent_at: null,
      });
      inserted();
      await held;
    });
    await insertedNow;

    const later = ingest(`later-${randomUUID()}`);
    for (let round = 0; round < 10; round += 1) {
      const page = await poll(cursor);
      seen.push(...page.ids);
      cursor = page.cursor;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    release();
    await other;
    const laterId = (await later).body.id as string;
    const last = await poll(cursor);
    seen.push(...last.ids);

    expect(seen).toEqual([inFlightId, laterId]);
  });
});
