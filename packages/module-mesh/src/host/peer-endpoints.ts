import { lookup } from 'node:dns/promises';
import { isIPv4 } from 'node:net';
import { parseEndpoint } from '../endpoint.js';

/** How long (ms) a peer's endpoint name may take to resolve before it counts as not resolving. */
const LOOKUP_TIMEOUT_MS = 5_000;

/** Resolves a host name to an address; rejects when it does not resolve. */
export type NameLookup = (host: string) => Promise<unknown>;

/** A `[Peer]` whose `Endpoint` line was left out, and why. */
export interface DroppedEndpoint {
  /** The agent the peer belongs to (the `# <agent>` comment of its section). */
  peer: string;
  endpoint: string;
  /** The resolver's error code (`ENOTFOUND`, `EAI_AGAIN`) or `timeout`. */
  reason: string;
}

/** `lookup` of `host` within {@link LOOKUP_TIMEOUT_MS}: `null` when it resolves, else the reason. */
async function resolveFailure(host: string, resolve: NameLookup): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((done) => {
    timer = setTimeout(() => done('timeout'), LOOKUP_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([
      resolve(host).then(
        () => null,
        (error: unknown) => String((error as { code?: unknown }).code ?? 'unresolvable'),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Leaves out the `Endpoint` line of each `[Peer]` of a wg-quick text whose
 * DNS name does not resolve on this host. wg(8) resolves endpoint names
 * when it loads a configuration and refuses the whole file when one fails,
 * so any agent that registered an unresolvable name (or let its DNS lapse)
 * and was given access to this agent would take this host's whole mesh
 * down. Without an `Endpoint`, WireGuard waits for that peer to connect
 * first and learns its address then. IP endpoints are kept as they are;
 * each distinct name is looked up once, all at the same time.
 * @param resolve the resolver (default: the system's, `getaddrinfo` through `dns.lookup`).
 * @returns the text to write and the endpoints left out.
 */
export async function dropUnresolvableEndpoints(
  text: string,
  resolve: NameLookup = (host) => lookup(host),
): Promise<{ text: string; dropped: DroppedEndpoint[] }> {
  const lines = text.split('\n');
  const names = new Set<string>();
  for (const line of lines) {
    const endpoint = /^Endpoint\s*=\s*(\S+)\s*$/.exec(line.trim())?.[1];
    const parsed = endpoint === undefined ? null : parseEndpoint(endpoint);
    if (parsed && 'host' in parsed && isName(parsed.host)) names.add(parsed.host);
  }
  const failures = new Map<string, string>();
  await Promise.all(
    [...names].map(async (name) => {
      const failure = await resolveFailure(name, resolve);
      if (failure !== null) failures.set(name, failure);
    }),
  );
  if (failures.size === 0) return { text, dropped: [] };

  const dropped: DroppedEndpoint[] = [];
  let peer = '';
  const kept = lines.filter((line) => {
    const trimmed = line.trim();
    if (trimmed === '[Peer]') peer = '';
    const comment = /^#\s*(\S+)\s*$/.exec(trimmed)?.[1];
    if (comment !== undefined && peer === '') peer = comment;
    const endpoint = /^Endpoint\s*=\s*(\S+)\s*$/.exec(trimmed)?.[1];
    if (endpoint === undefined) return true;
    const parsed = parseEndpoint(endpoint);
    const reason = 'host' in parsed ? failures.get(parsed.host) : undefined;
    if (reason === undefined) return true;
    dropped.push({ peer: peer || 'unnamed peer', endpoint, reason });
    return false;
  });
  return { text: kept.join('\n'), dropped };
}

/** Whether an endpoint host is a DNS name (not an IPv4 address or a bracketed IPv6 one). */
function isName(host: string): boolean {
  return !host.startsWith('[') && !isIPv4(host);
}
