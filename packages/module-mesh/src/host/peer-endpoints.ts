import { lookup } from 'node:dns/promises';
import { isIPv4 } from 'node:net';
import { parseEndpoint } from '../endpoint.js';
import { createLookupGate, type LookupGate, type NameLookup, type ResolvedAddress } from './lookup-gate.js';

export type { NameLookup, ResolvedAddress } from './lookup-gate.js';

/** How long (ms) a peer's endpoint name may take to resolve before it counts as not resolving. */
const LOOKUP_TIMEOUT_MS = 5_000;

/** The system's resolver: `getaddrinfo` through `dns.lookup`, as wg itself resolves names. */
const systemLookup: NameLookup = (host) => lookup(host, { all: true });

/** A `[Peer]` whose `Endpoint` line was left out, and why. */
export interface DroppedEndpoint {
  /** The agent the peer belongs to (the `# <agent>` comment of its section). */
  peer: string;
  endpoint: string;
  /**
   * The resolver's error code (`ENOTFOUND`, `EAI_AGAIN`), `timeout`, or
   * `invalid` for an endpoint wg could not parse (e.g. an IPv6 zone id
   * stored before the server refused them).
   */
  reason: string;
}

/** One gate per resolver, so that every pass of a watching process shares the same bound on lookups in flight. */
const gates = new WeakMap<NameLookup, LookupGate>();

function gateOf(resolve: NameLookup): LookupGate {
  let gate = gates.get(resolve);
  if (gate === undefined) {
    gate = createLookupGate(resolve);
    gates.set(resolve, gate);
  }
  return gate;
}

/**
 * Resolves each `[Peer]`'s DNS-name `Endpoint` of a wg-quick text on this
 * host and writes the address in its place (IPv6 in brackets), or leaves
 * the line out when the name does not resolve within 5 s. wg(8) resolves
 * names when it loads a configuration and refuses the whole file when one
 * fails, so a name that another agent registered and let lapse (or answers
 * only sometimes) would take this host's whole mesh down the next time the
 * file is loaded: with addresses, nothing is resolved then. Without an
 * `Endpoint`, WireGuard waits for that peer to connect first and learns its
 * address then. An `Endpoint` that is not a valid `<host>:<port>` (such as
 * `[fe80::1%eth0]:51820`, which a server before zone ids were refused may
 * still hold, and which wg refuses the whole file for) is left out the
 * same way, with reason `invalid`. IP endpoints are kept as they are; each distinct name is
 * looked up once, at most three at a time in the whole process (a
 * {@link LookupGate}: names that hang cannot take libuv's thread pool, and
 * names that hung before share one slot), within the same 5 s. When a name has several addresses
 * and `previous` (the file as last written) gave the peer one of them, that
 * one is kept, so that rotating DNS answers do not rewrite the file (and
 * reset the peer's endpoint) on every pass.
 * @param resolve the resolver (default: the system's, `getaddrinfo` through `dns.lookup`, as wg itself uses).
 * @returns the text to write and the endpoints left out.
 */
export async function resolvePeerEndpoints(
  text: string,
  resolve: NameLookup = systemLookup,
  previous = '',
): Promise<{ text: string; dropped: DroppedEndpoint[] }> {
  const lines = text.split('\n');
  const endpointOf = (line: string) => {
    const value = endpointValueOf(line);
    const parsed = value === undefined ? null : parseEndpoint(value);
    return value !== undefined && parsed && 'host' in parsed && isName(parsed.host) ? { value, ...parsed } : null;
  };
  // Each name with the peers that chose it: a peer whose name hung once stays in the gate's late lane whatever name it gives next.
  const owners = new Map<string, string[]>();
  for (const line of lines) {
    const host = endpointOf(line)?.host;
    if (host !== undefined && !owners.has(host)) owners.set(host, []);
  }
  for (const [peer, value] of endpointsByPeer(text)) {
    const parsed = parseEndpoint(value);
    if ('host' in parsed) owners.get(parsed.host)?.push(peer);
  }
  const gate = gateOf(resolve);
  const answers = new Map(
    await Promise.all([...owners].map(async ([name, peers]) => [name, await gate.lookup(name, LOOKUP_TIMEOUT_MS, peers)] as const)),
  );

  const written = endpointsByPeer(previous);
  const dropped: DroppedEndpoint[] = [];
  const peers = peerOfEachLine(lines);
  const out = lines.flatMap((line, index) => {
    const peer = peers[index] ?? '';
    const value = endpointValueOf(line);
    if (value !== undefined && 'problem' in parseEndpoint(value)) {
      dropped.push({ peer: peer || 'unnamed peer', endpoint: value, reason: 'invalid' });
      return [];
    }
    const endpoint = endpointOf(line);
    const answer = endpoint ? answers.get(endpoint.host) : undefined;
    if (!endpoint || !answer) return [line];
    if ('reason' in answer) {
      dropped.push({ peer: peer || 'unnamed peer', endpoint: endpoint.value, reason: answer.reason });
      return [];
    }
    const literal = (entry: ResolvedAddress) => (entry.family === 6 ? `[${entry.address}]` : entry.address);
    const before = written.get(peer);
    const kept = answer.find((entry) => `${literal(entry)}:${endpoint.port}` === before);
    return [`Endpoint = ${literal(kept ?? (answer[0] as ResolvedAddress))}:${endpoint.port}`];
  });
  return { text: out.join('\n'), dropped };
}

/**
 * For each line of a wg-quick text, the agent of the `[Peer]` section it is
 * in: the section's first `# <agent>` comment, once that comment is read
 * (`''` before it, and outside every `[Peer]` section's comment).
 */
function peerOfEachLine(lines: readonly string[]): string[] {
  let peer = '';
  return lines.map((line) => {
    const trimmed = line.trim();
    if (trimmed === '[Peer]') peer = '';
    const comment = /^#\s*(\S+)\s*$/.exec(trimmed)?.[1];
    if (comment !== undefined && peer === '') peer = comment;
    return peer;
  });
}

/** The `Endpoint` of each `[Peer]` of a wg-quick text, by the peer's `# <agent>` comment. */
function endpointsByPeer(text: string): Map<string, string> {
  const lines = text.split('\n');
  const peers = peerOfEachLine(lines);
  const endpoints = new Map<string, string>();
  lines.forEach((line, index) => {
    const endpoint = endpointValueOf(line);
    const peer = peers[index];
    if (endpoint !== undefined && peer) endpoints.set(peer, endpoint);
  });
  return endpoints;
}

/** The value of an `Endpoint = …` line (everything after `=`, trimmed), or `undefined` for any other line. */
function endpointValueOf(line: string): string | undefined {
  return /^Endpoint\s*=(.*)$/.exec(line.trim())?.[1]?.trim();
}

/** Whether a parsed endpoint host is a DNS name (not an IPv4 address or a bracketed IPv6 one). */
function isName(host: string): boolean {
  return !host.startsWith('[') && !isIPv4(host);
}
