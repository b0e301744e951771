/**
 * Publishes and removes the TXT records of ACME DNS-01 challenges
 * (RFC 8555 §8.4) in the zone that holds a hostname. The built-in
 * implementation is RFC 2136 dynamic update signed with TSIG
 * ({@link createRfc2136DnsProvider}); others (a DNS host's API) plug in
 * through `createGatewayModule({ dnsProvider })`.
 */
export interface DnsProvider {
  /** One line for logs, without secrets, e.g. `rfc2136 (127.0.0.1:53, key acme-update.)`. */
  describe(): string;
  /**
   * Adds `value` to the TXT record set at `name` (a fully qualified name
   * without trailing dot, e.g. `_acme-challenge.app.example.com`). Other
   * values at the name stay. Idempotent.
   * @throws Error (with the server's answer) when the record cannot be added.
   */
  addTxt(options: { name: string; value: string; signal?: AbortSignal }): Promise<void>;
  /**
   * Removes `value` from the TXT record set at `name`; a missing value is
   * not an error.
   * @throws Error when the server refuses the change.
   */
  removeTxt(options: { name: string; value: string; signal?: AbortSignal }): Promise<void>;
}
