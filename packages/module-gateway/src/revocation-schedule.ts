import { newId } from '@agentinfra/core';
import { type GatewayContext, REASON_CESSATION_OF_OPERATION, REVOKE_JOB, REVOKE_MAX_ATTEMPTS } from './gateway-context.js';

/** The dedupe key of the `gateway.revoke` job of revocation `revocationId` (how rows from before `job_id` find it). */
export function revokeJobKey(revocationId: string): string {
  return `${REVOKE_JOB}:${revocationId}`;
}

/** The certificate a revocation is scheduled for: where it came from, and its sealed key (for RFC 8555 §7.6 self-signed revocation). */
export interface RevokedCertificate {
  host: string;
  serial: string;
  directoryUrl: string;
  chainPem: string;
  orderId: string;
  keySealed: string | null;
}

/**
 * In `trx`, enqueues the `gateway.revoke` job for `certificate` (reason
 * `cessationOfOperation`) and records its pending revocation with the job's
 * id, so the revocation commits exactly with the change that calls for it
 * (a release, or a certificate that arrived after its host was released).
 * @param at the revocation's `created_at`, ms since the epoch.
 * @returns the revocation's id.
 */
export async function scheduleRevocation(
  jobs: GatewayContext['deps']['jobs'],
  trx: Parameters<GatewayContext['deps']['sql']['lockInTransaction']>[0],
  certificate: RevokedCertificate,
  at: number,
): Promise<string> {
  const revocationId = newId('rvk_');
  const { id: jobId } = await jobs.enqueue({
    name: REVOKE_JOB,
    payload: { revocation_id: revocationId },
    dedupeKey: revokeJobKey(revocationId),
    maxAttempts: REVOKE_MAX_ATTEMPTS,
    trx,
  });
  await trx('gateway_revocations').insert({
    revocation_id: revocationId,
    host: certificate.host,
    serial: certificate.serial,
    directory_url: certificate.directoryUrl,
    chain_pem: certificate.chainPem,
    reason: REASON_CESSATION_OF_OPERATION,
    status: 'pending',
    attempts: 0,
    last_error: null,
    problem: null,
    created_at: at,
    revoked_at: null,
    order_id: certificate.orderId,
    key_sealed: certificate.keySealed,
    job_id: jobId,
  });
  return revocationId;
}
