import type { SqlDatabase } from '@agentinfra/core';

/**
 * A view of `db` whose first `knex.transaction(…)` call awaits `write()`
 * before it begins: a concurrent writer slipping in between a reader's
 * SELECT and the transaction that acts on what it read. Every other use of
 * the view, and every later transaction, goes straight to `db`.
 * @returns the view (closing it closes `db`).
 */
export function beforeFirstTransaction(db: SqlDatabase, write: () => Promise<void>): SqlDatabase {
  let pending: (() => Promise<void>) | null = write;
  const knex = new Proxy(db.knex, {
    get(target, property, receiver) {
      if (property !== 'transaction') return Reflect.get(target, property, receiver);
      return async (...args: Parameters<typeof target.transaction>) => {
        const before = pending;
        pending = null;
        if (before) await before();
        return target.transaction(...args);
      };
    },
  });
  return Object.create(db, { knex: { value: knex } }) as SqlDatabase;
}
