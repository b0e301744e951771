import type { Migration } from '@agentinfra/core';
import { nameSearchForm } from '../name-search.js';

/** Agents folded per statement while filling the column in. */
const BATCH = 500;

/**
 * `display_name_search`: the display name in the form agent search
 * compares ({@link nameSearchForm}), written by JavaScript so that SQLite
 * finds non-ASCII names regardless of case as PostgreSQL does. Existing rows
 * are filled in here, in batches in agent id order. Nullable: a row written
 * without it (by a process older than this migration) is searched by
 * `lower(display_name)` instead.
 */
export const identityAgentNameSearch: Migration = {
  async up(knex) {
    await knex.schema.alterTable('identity_agents', (table) => {
      table.text('display_name_search').nullable();
    });
    let after: string | null = null;
    for (;;) {
      const query = knex('identity_agents').select('agent_id', 'display_name').orderBy('agent_id').limit(BATCH);
      if (after !== null) query.where('agent_id', '>', after);
      const rows = (await query) as Array<{ agent_id: string; display_name: string }>;
      const last = rows[rows.length - 1];
      if (!last) break;
      await knex('identity_agents')
        .whereIn(
          'agent_id',
          rows.map((row) => row.agent_id),
        )
        .update({
          display_name_search: knex.raw(
            `case agent_id ${rows.map(() => 'when ? then ?').join(' ')} end`,
            rows.flatMap((row) => [row.agent_id, nameSearchForm(row.display_name)]),
          ),
        });
      after = last.agent_id;
    }
  },
  async down(knex) {
    await knex.schema.alterTable('identity_agents', (table) => {
      table.dropColumn('display_name_search');
    });
  },
};
