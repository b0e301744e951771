import { Resolver } from 'node:dns/promises';

/** Outcome of one TXT lookup: the values found (chunks joined), or why the lookup failed. */
export type TxtLookupResult = { ok: true; values: string[] } | { ok: false; reason: string };

/**
 * Looks up TXT records through chosen resolvers. The /host/claim check and
 * the DNS-01 propagation wait use it; `createGatewayModule({ txtLookup })`
 * can swap it (e.g. DNS over HTTPS).
 */
export interface TxtLookup {
  /** One line for logs, e.g. `127.0.0.1:53, [::1]:53` or `system resolvers`. */
  describe(): string;
  /** TXT values at `name`; no record (NXDOMAIN, NODATA) is `{ ok: true, values: [] }`. Never throws. */
  lookup(name: string): Promise<TxtLookupResult>;
}

const NO_RECORD = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * A {@link TxtLookup} over `node:dns` with `servers` (`host:port`,
 * `[v6]:port`; the system's resolvers when empty). Each lookup uses a new
 * c-ares channel, so no answer (positive or negative) is ever served from
 * a cache of this process: a record published a second ago is seen as
 * soon as the resolvers see it.
 */
export function createTxtLookup(options: { servers: readonly string[]; timeoutMs?: number; tries?: number }): TxtLookup {
  const servers = [...options.servers];
  return {
    describe: () => (servers.length > 0 ? servers.join(', ') : 'system resolvers'),
    async lookup(name) {
      const resolver = new Resolver({ timeout: options.timeoutMs ?? 2_000, tries: options.tries ?? 2 });
      if (servers.length > 0) resolver.setServers(servers);
      try {
        const records = await resolver.resolveTxt(name);
        return { ok: true, values: records.map((chunks) => chunks.join('')) };
      } catch (error) {
        const code = (error as { code?: string }).code ?? 'ERROR';
        if (NO_RECORD.has(code)) return { ok: true, values: [] };
        return { ok: false, reason: `DNS lookup failed (${code})` };
      } finally {
        resolver.cancel();
      }
    },
  };
}
