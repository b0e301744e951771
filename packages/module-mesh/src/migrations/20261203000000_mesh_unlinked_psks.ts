import type { Migration } from '@agentinfra/core';

/**
 * Deletes the PSKs of pairs no ACL links any more. Revoking the last ACL of a
 * pair now deletes its PSK; before, the row stayed, and linking the pair again
 * handed out the old key. Nothing to undo: the next /wg_config of a pair
 * linked again creates a fresh key.
 */
export const meshUnlinkedPsks: Migration = {
  async up(knex) {
    await knex('mesh_psks')
      .whereNotExists((acls) => {
        acls
          .select(knex.raw('1'))
          .from('mesh_acls')
          .where((pair) => {
            pair
              .where((forward) =>
                forward.whereRaw('mesh_acls.from_agent = mesh_psks.agent_a').whereRaw('mesh_acls.to_agent = mesh_psks.agent_b'),
              )
              .orWhere((backward) =>
                backward.whereRaw('mesh_acls.from_agent = mesh_psks.agent_b').whereRaw('mesh_acls.to_agent = mesh_psks.agent_a'),
              );
          });
      })
      .delete();
  },
  async down() {},
};
