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
