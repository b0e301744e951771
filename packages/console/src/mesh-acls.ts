/** One allowed flow as agent-mesh lists it: `from` may reach `to` on `port`/`proto` (`port` is 0 for `icmp`, which has no ports). */
export interface AclEdge {
  from_agent: string;
  to_agent: string;
  port: number;
  proto: string;
}

/** The ports one agent may reach on another, as labels (see {@link portLabel}). */
export interface AclDirection {
  from: string;
  to: string;
  ports: string[];
}

/** An unordered pair of agents (`a` < `b`, as agent-mesh keys its pre-shared keys) with the flows between them, `a`→`b` first. */
export interface PeerPair<T extends AclEdge> {
  a: string;
  b: string;
  directions: AclDirection[];
  acls: T[];
}

/** `8080/tcp`, `53/udp`, or `icmp` (an ICMP rule opens no port). */
export function portLabel(acl: Pick<AclEdge, 'port' | 'proto'>): string {
  return acl.proto === 'icmp' ? 'icmp' : `${acl.port}/${acl.proto}`;
}

/** The ACLs grouped by direction (`from`, `to`), in the order they first appear. */
export function aclDirections(acls: readonly AclEdge[]): AclDirection[] {
  const directions = new Map<string, AclDirection>();
  for (const acl of acls) {
    const key = `${acl.from_agent}\u0000${acl.to_agent}`;
    const direction = directions.get(key) ?? { from: acl.from_agent, to: acl.to_agent, ports: [] };
    direction.ports.push(portLabel(acl));
    directions.set(key, direction);
  }
  return [...directions.values()];
}

/** The ACLs grouped by unordered pair of agents (one pre-shared key each), sorted by `a`, then `b`. */
export function peerPairs<T extends AclEdge>(acls: readonly T[]): PeerPair<T>[] {
  const pairs = new Map<string, PeerPair<T>>();
  for (const acl of acls) {
    const [a, b] = acl.from_agent < acl.to_agent ? [acl.from_agent, acl.to_agent] : [acl.to_agent, acl.from_agent];
    const key = `${a}\u0000${b}`;
    const pair = pairs.get(key) ?? { a, b, directions: [], acls: [] };
    pair.acls.push(acl);
    pairs.set(key, pair);
  }
  return [...pairs.values()]
    .sort((x, y) => (x.a === y.a ? (x.b < y.b ? -1 : 1) : x.a < y.a ? -1 : 1))
    .map((pair) => ({
      ...pair,
      directions: aclDirections(pair.acls).sort((x, y) => (x.from === pair.a ? -1 : 0) - (y.from === pair.a ? -1 : 0)),
    }));
}
