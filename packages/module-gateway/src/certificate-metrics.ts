import type { PortMap } from '@agentinfra/core';

/**
 * Registers `agentinfra_certificate_expiry_timestamp_seconds{host}`: the
 * `not_after` of each stored certificate in seconds since the epoch, read
 * from `gateway_certificates` at every scrape (Prometheus wants base units;
 * days remaining are `(metric - time()) / 86400`). The label values are the
 * operator's own claimed host names, one series per certificate.
 */
export function registerCertificateMetrics(deps: Pick<PortMap, 'metrics' | 'sql'>): void {
  deps.metrics.gauge<'host'>({
    name: 'agentinfra_certificate_expiry_timestamp_seconds',
    help: 'Expiry (not_after) of the stored certificate of each host, in seconds since the epoch.',
    labelNames: ['host'],
    collect: async (gauge) => {
      const rows = (await deps.sql.knex('gateway_certificates').select('host', 'not_after')) as Array<{
        host: string;
        not_after: number | string;
      }>;
      gauge.reset();
      for (const row of rows) gauge.set({ host: row.host }, Math.floor(Number(row.not_after) / 1000));
    },
  });
}
