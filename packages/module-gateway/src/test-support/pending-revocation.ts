import type { RevocationRow } from '../gateway-rows.js';

/**
 * A pending `gateway_revocations` row for a released host's certificate
 * (reason 5, cessationOfOperation; a placeholder chain) at `directoryUrl`,
 * never attempted and with no job: for tests that insert it and run its
 * revocation by hand.
 */
export function pendingRevocation(revocationId: string, directoryUrl: string): RevocationRow {
  return {
    revocation_id: revocationId,
    host: 'released.example.test',
    serial: 'abc123',
    directory_url: directoryUrl,
    chain_pem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
    reason: 5,
    status: 'pending',
    attempts: 0,
    last_error: null,
    problem: null,
    created_at: Date.now(),
    revoked_at: null,
    order_id: null,
    key_sealed: null,
    job_id: null,
  };
}
