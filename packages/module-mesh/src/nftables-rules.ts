import { isIPv6 } from 'node:net';
import type { AclProtocol } from './acl.js';

/** The nftables table the mesh hooks own (one mesh interface per host). */
export const NFTABLES_TABLE = 'inet agentinfra_mesh';

/** One inbound opening: traffic from `address` (a peer's mesh address) on `proto`/`port` (`port` 0 for icmp). */
export interface InboundRule {
  address: string;
  proto: AclProtocol;
  port: number;
}

/** The wg-quick hook commands: `up` for `PostUp`, `down` for `PreDown`. */
export interface NftablesHooks {
  up: string;
  down: string;
}

function elementsOf(rules: readonly InboundRule[], withPort: boolean): string {
  const elements = rules.map((rule) => (withPort ? `${rule.address} . ${rule.port}` : rule.address));
  return [...new Set(elements)].sort().join(', ');
}

/**
 * nftables commands that drop inbound traffic on the mesh interface unless
 * an ACL allows it (WireGuard alone filters only by peer). One `nft`
 * invocation, so the ruleset is applied in one transaction; re-running it
 * replaces the table. Rules, in order, in chain `inbound` of table
 * `inet agentinfra_mesh` (input hook):
 * 1. traffic from other interfaces is not touched;
 * 2. replies (`ct state established,related`) pass, so outbound connections work;
 * 3. per ACL: `ip saddr . tcp dport { <peer> . <port>, … } accept` (udp alike),
 *    `ip saddr { <peer>, … } meta l4proto icmp accept` (`ip6`/`ipv6-icmp` for IPv6);
 * 4. everything else from the mesh is dropped.
 * `%i` is left for wg-quick to replace with the interface name. Only
 * addresses and port numbers the server produced go inside the quotes.
 */
export function nftablesHooks(rules: readonly InboundRule[]): NftablesHooks {
  const add = (rule: string) => `add rule ${NFTABLES_TABLE} inbound ${rule}`;
  const commands = [
    `add table ${NFTABLES_TABLE}`,
    `delete table ${NFTABLES_TABLE}`,
    `add table ${NFTABLES_TABLE}`,
    `add chain ${NFTABLES_TABLE} inbound { type filter hook input priority filter; policy accept; }`,
    add('iifname != "%i" accept'),
    add('ct state established,related accept'),
  ];
  for (const family of ['ip', 'ip6'] as const) {
    const ofFamily = rules.filter((rule) => isIPv6(rule.address) === (family === 'ip6'));
    for (const proto of ['tcp', 'udp'] as const) {
      const matching = ofFamily.filter((rule) => rule.proto === proto);
      if (matching.length > 0) commands.push(add(`${family} saddr . ${proto} dport { ${elementsOf(matching, true)} } accept`));
    }
    const icmp = ofFamily.filter((rule) => rule.proto === 'icmp');
    if (icmp.length > 0) {
      commands.push(add(`${family} saddr { ${elementsOf(icmp, false)} } meta l4proto ${family === 'ip' ? 'icmp' : 'ipv6-icmp'} accept`));
    }
  }
  commands.push(add('drop'));
  return { up: `nft '${commands.join('; ')}'`, down: `nft 'delete table ${NFTABLES_TABLE}'` };
}
