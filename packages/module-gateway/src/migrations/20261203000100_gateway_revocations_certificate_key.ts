import type { Migration } from '@agentinfra/core';

/**
 * The certificate's private key beside each pending revocation (sealed as in
 * `gateway_certificates`, with the context of `order_id`): when the ACME
 * account that ordered the certificate has been replaced, the revocation is
 * signed with the certificate's key instead (RFC 8555 §7.6). Null for rows
 * written before, and once the revocation is done or failed for good.
 */
export const gatewayRevocationsCertificateKey: Migration = {
  async up(knex) {
    await knex.schema.alterTable('gateway_revocations', (table) => {
      table.string('order_id', 64).nullable();
      table.text('key_sealed').nullable();
    });
  },
  async down(knex) {
    await knex.schema.alterTable('gateway_revocations', (table) => {
      table.dropColumn('key_sealed');
      table.dropColumn('order_id');
    });
  },
};
