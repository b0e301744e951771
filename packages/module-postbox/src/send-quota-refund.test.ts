import type { SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

const alice = `alice@${MAIL_DOMAIN}`;

// An agent retrying /send through a blob store outage used up its daily quota on messages
// that were never stored, and could not send for 24 hours once the store was back.
describe.each(sqlDatabases())('send quota through a blob store outage on $name', ({ create }) => {
  let storeDown = false;

  const t = usePostboxServer(create, {
    postboxConfig: { smtp: { port: 0 } },
    wrapBlobStore: (store) => ({
      ...store,
      async put(options) {
        if (storeDown) throw new Error('The blob store is unreachable');
        return store.put(options);
      },
    }),
  });

  it('gives back the unit of every send that failed, so the whole quota is there once the store answers', async () => {
    const send = (subject: string) =>
      t.postbox('send', { agent_id: 'alice', from: alice, to: 'x@example.org', subject, body: 'b' }, 'alice');
    expect((await t.server.call('agent-identity/settings/set', { key: 'postbox_send_quota_per_day', value: 2 }, t.bridge)).status).toBe(
      200,
    );
    try {
      storeDown = true;
      for (let attempt = 0; attempt < 4; attempt += 1) {
        const failed = await send(`attempt ${attempt}`);
        expect(failed.status).toBeGreaterThanOrEqual(500);
        expect(failed.body.error.code).toMatch(/^[a-z_]+$/);
      }
      storeDown = false;
      expect((await send('first')).body.status).toBe('queued');
      expect((await send('second')).body.status).toBe('queued');
      const over = await send('third');
      expect(over.status).toBe(429);
      const listed = await t.postbox('list', { agent_id: 'alice', direction: 'out' }, 'alice');
      expect(listed.body.messages.map((message: { subject: string }) => message.subject).sort()).toEqual(['first', 'second']);
    } finally {
      storeDown = false;
      await t.server.call('agent-identity/settings/set', { key: 'postbox_send_quota_per_day', value: 100 }, t.bridge);
    }
  });
});

// The other side of the refund: a COMMIT whose answer is lost may have stored the message, and
// then its unit must stay used and its raw message in the blob store (the queued row refers to it).
describe.each(sqlDatabases())('send quota when the answer to a COMMIT is lost on $name', ({ create }) => {
  let loseNextCommitAnswer = false;

  /**
   * `db` whose next transaction that inserts into `postbox_messages`, once armed, commits and then
   * fails the way a dropped connection does. Other transactions (the job runner's claims on
   * PostgreSQL, for one) run concurrently and pass untouched.
   */
  const losingCommitAnswers = (db: SqlDatabase): SqlDatabase => {
    const knex = new Proxy(db.knex, {
      get(target, property) {
        if (property !== 'transaction') return Reflect.get(target, property, target);
        return async (...args: Parameters<Knex['transaction']>) => {
          const work = args[0];
          if (typeof work !== 'function') return target.transaction(...args);
          let insertedMessage = false;
          const result = await target.transaction(async (trx) => {
            const watched = new Proxy(trx, {
              apply(callee, self, tableArgs: unknown[]) {
                const builder = Reflect.apply(callee, self, tableArgs);
                if (tableArgs[0] !== 'postbox_messages') return builder;
                const insert = builder.insert.bind(builder);
                builder.insert = (...rows: unknown[]) => {
                  insertedMessage = true;
                  return insert(...rows);
                };
                return builder;
              },
            });
            return work(watched);
          });
          if (loseNextCommitAnswer && insertedMessage) {
            loseNextCommitAnswer = false;
            throw new Error('Connection terminated unexpectedly');
          }
          return result;
        };
      },
    });
    return new Proxy(db, { get: (target, property) => (property === 'knex' ? knex : Reflect.get(target, property, target)) });
  };

  const t = usePostboxServer(
    async () => {
      const fixture = await create();
      return { db: losingCommitAnswers(fixture.db), cleanup: fixture.cleanup };
    },
    { postboxConfig: { smtp: { port: 0 } } },
  );

  it('keeps the unit used and the raw message stored, since the message was queued', async () => {
    const send = (subject: string) =>
      t.postbox('send', { agent_id: 'alice', from: alice, to: 'x@example.org', subject, body: 'b' }, 'alice');
    expect((await t.server.call('agent-identity/settings/set', { key: 'postbox_send_quota_per_day', value: 2 }, t.bridge)).status).toBe(
      200,
    );
    try {
      loseNextCommitAnswer = true;
      const lost = await send('answer lost');
      expect(lost.status).toBe(500);
      expect(loseNextCommitAnswer).toBe(false);
      expect((await send('second')).body.status).toBe('queued');
      expect((await send('third')).status).toBe(429);
      const listed = await t.postbox('list', { agent_id: 'alice', direction: 'out' }, 'alice');
      const queued = listed.body.messages.find((message: { subject: string }) => message.subject === 'answer lost');
      expect(queued).toMatchObject({ status: 'queued', mime_ref: expect.stringMatching(/^postbox\/mime\//) });
      expect(await t.blobStore.stat({ key: queued.mime_ref })).not.toBeNull();
    } finally {
      loseNextCommitAnswer = false;
      await t.server.call('agent-identity/settings/set', { key: 'postbox_send_quota_per_day', value: 100 }, t.bridge);
    }
  });
});
