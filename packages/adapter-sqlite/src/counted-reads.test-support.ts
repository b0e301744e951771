import type { Knex } from 'knex';
import { withConnection } from './connection-lease.js';

/**
 * Creates the view `counted_notes` (`id`, `text`) over table `notes` on the
 * pool's connection, whose `text` column counts every read of it (through a
 * scalar function registered on that connection), so a test can tell how
 * many attached rows a query read.
 * @returns the number of reads so far.
 */
export async function countedNotesView(knex: Knex): Promise<() => number> {
  let reads = 0;
  await withConnection(knex, (connection) => {
    connection.function('counted_read', (text: unknown) => {
      reads += 1;
      return text;
    });
    connection.exec('create view counted_notes as select id, counted_read(text) as text from notes');
  });
  return () => reads;
}

/**
 * Records, on the pool's connection, every statement prepared from then on
 * that reads the vec0 table `vectors` (a quoted name, as in the SQL): a KNN
 * pass as the number of neighbours it asks for (its `k` binding, which bounds
 * the rows it yields), any other read of it as `'scan'` (it reads every row).
 * @returns the reads so far, in order.
 */
export async function recordedVectorReads(knex: Knex, vectors: string): Promise<() => Array<number | 'scan'>> {
  const reads: Array<number | 'scan'> = [];
  // The driver may hand out one statement object for the same SQL again: each is wrapped once.
  const wrapped = new WeakSet<object>();
  await withConnection(knex, (connection) => {
    const prepare = connection.prepare.bind(connection);
    connection.prepare = ((sql: string) => {
      const statement = prepare(sql);
      if (!sql.includes(vectors) || wrapped.has(statement)) return statement;
      wrapped.add(statement);
      const all = statement.all.bind(statement);
      statement.all = ((...bindings: unknown[]) => {
        reads.push(sql.includes('embedding match') ? (bindings[1] as number) : 'scan');
        return all(...bindings);
      }) as typeof statement.all;
      return statement;
    }) as typeof connection.prepare;
  });
  return () => [...reads];
}
