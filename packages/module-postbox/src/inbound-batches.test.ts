import { sqlDatabases } from '@agentinfra/testkit';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LARGE_MESSAGE_CHARS } from './inbound.js';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

/** One insert into postbox_messages: how many rows it stored, and whether one of them was large. */
interface Insert {
  rows: number;
  large: boolean;
}

describe.each(sqlDatabases())('inbound batches on $name', ({ create }) => {
  const t = usePostboxServer(create);
  let transport: ReturnType<typeof nodemailer.createTransport>;

  beforeAll(() => {
    transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true });
  });
  afterAll(() => {
    transport?.close();
  });

  /** Sends one mail with a body of `size` characters to alice and bob (their messages are submitted together) and lists the inserts. */
  async function insertsOfMail(size: number, id: string): Promise<Insert[]> {
    const inserts: Insert[] = [];
    const onQuery = (query: { sql: string; bindings?: unknown[] }) => {
      if (!/^insert into [`"]postbox_messages[`"]/i.test(query.sql)) return;
      const values = query.bindings ?? [];
      const columns = (/\(([^)]*)\)/.exec(query.sql)?.[1] ?? '').split(',').length;
      inserts.push({
        rows: values.length / columns,
        large: values.some((value) => typeof value === 'string' && value.length >= LARGE_MESSAGE_CHARS),
      });
    };
    t.db.knex.on('query', onQuery);
    try {
      await transport.sendMail({
        from: 'sender@example.net',
        to: [`alice@${MAIL_DOMAIN}`, `bob@${MAIL_DOMAIN}`],
        subject: `batches ${id}`,
        messageId: `<batches-${id}@example.net>`,
        text: 'b'.repeat(size),
      });
    } finally {
      t.db.knex.off('query', onQuery);
    }
    return inserts;
  }

  it('stores each large message in an insert of its own', async () => {
    expect(await insertsOfMail(LARGE_MESSAGE_CHARS, 'large')).toEqual([
      { rows: 1, large: true },
      { rows: 1, large: true },
    ]);
  });

  it('stores small messages submitted together in one insert', async () => {
    expect(await insertsOfMail(100, 'small')).toEqual([{ rows: 2, large: false }]);
  });
});
