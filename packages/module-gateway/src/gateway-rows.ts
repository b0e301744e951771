/** Row shapes of the gateway tables (see the migration). Timestamps are ms since the epoch. */

export interface HostRow {
  host: string;
  host_id: string;
  agent_id: string;
  bound_at: number;
  /** JSON array of normalised IP addresses. */
  ips: string;
  ips_updated_at: number | null;
}

export interface ClaimRow {
  agent_id: string;
  host: string;
  token: string;
  created_at: number;
  expires_at: number;
}

export interface AccountRow {
  directory_url: string;
  account_url: string;
  key_sealed: string;
  created_at: number;
}

/** Order status: `queued` → `processing` → `valid` | `failed` | `cancelled`. */
export type OrderStatus = 'queued' | 'processing' | 'valid' | 'failed' | 'cancelled';

export interface OrderRow {
  order_id: string;
  host: string;
  host_id: string;
  agent_id: string;
  /** The host while the order is queued or processing (unique: one live order per host), else null. */
  active_host: string | null;
  status: OrderStatus;
  reason: 'issue' | 'renew';
  challenge: 'http-01' | 'dns-01';
  directory_url: string;
  acme_order_url: string | null;
  /** The certificate key, sealed, once generated (before finalize, so a restart reuses it). */
  key_sealed: string | null;
  job_id: string | null;
  attempts: number;
  last_error: string | null;
  /** JSON of the CA's last problem document. */
  problem: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export interface CertificateRow {
  host: string;
  cert_id: string;
  host_id: string;
  agent_id: string;
  order_id: string;
  directory_url: string;
  chain_pem: string;
  key_sealed: string;
  serial: string;
  not_before: number;
  not_after: number;
  issued_at: number;
}

export interface RevocationRow {
  revocation_id: string;
  host: string;
  serial: string;
  directory_url: string;
  chain_pem: string;
  reason: number;
  status: 'pending' | 'revoked' | 'failed';
  attempts: number;
  last_error: string | null;
  problem: string | null;
  created_at: number;
  revoked_at: number | null;
  /** The order that issued the certificate (the context `key_sealed` is sealed with); null on rows from before it was kept. */
  order_id: string | null;
  /** The certificate's private key, sealed, until the revocation is done or failed for good. */
  key_sealed: string | null;
  /** The `gateway.revoke` job that runs it; null on rows from before it was kept. */
  job_id: string | null;
}

/** SecretBox context of a certificate private key (bound to its order, so a sealed key moved to another row fails to open). */
export function certificateKeyContext(orderId: string): string {
  return `gateway.certificate-key\0${orderId}`;
}

/** SecretBox context of an ACME account key (bound to its directory). */
export function accountKeyContext(directoryUrl: string): string {
  return `gateway.account-key\0${directoryUrl}`;
}
