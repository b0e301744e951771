import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { promisify } from 'node:util';
import pLimit from 'p-limit';
import { InputError } from '../errors.js';
import { type AddressClass, classifyAddress } from './address-policy.js';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a host name to every address it has (the delivery connects only to
 * addresses this returned and the guard accepted).
 * @throws Error when the name does not resolve.
 */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

const lookupAll = promisify(dnsLookup);

/**
 * `getaddrinfo` calls in flight at most. Each holds one of libuv's four
 * threadpool threads (which file reads and writes need too) for as long as
 * the name takes to answer, so fifty targets on a slow or dead name server
 * would otherwise stall every file operation of the process.
 */
export const MAX_CONCURRENT_LOOKUPS = 2;
/** Milliseconds a name may take to resolve, waiting for a lookup slot included. */
export const LOOKUP_TIMEOUT_MS = 5_000;

/**
 * `resolve` with at most `concurrency` lookups in flight, each answering
 * within `timeoutMs` counted from the call (waiting for a slot included); a
 * lookup still waiting for its slot when its time is up is never started,
 * and callers asking for a name already being looked up share that lookup.
 * A lookup that outlives its caller keeps its slot until it ends (the
 * operating system's resolver cannot be cancelled).
 * @throws Error with code `ETIMEOUT` when the name did not resolve in time.
 */
export function boundedResolver(resolve: HostResolver, options: { concurrency: number; timeoutMs: number }): HostResolver {
  const slots = pLimit(options.concurrency);
  /** Lookups started and not finished, by name: callers asking for the same name at once share one. */
  const inFlight = new Map<string, Promise<ResolvedAddress[]>>();
  const timedOut = (hostname: string) =>
    Object.assign(new Error(`${hostname} did not resolve within ${options.timeoutMs / 1000} s`), { code: 'ETIMEOUT' });
  return async (hostname) => {
    let expired = false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        expired = true;
        reject(timedOut(hostname));
      }, options.timeoutMs);
    });
    let lookup = inFlight.get(hostname);
    if (!lookup) {
      const started = slots(() => (expired ? Promise.reject(timedOut(hostname)) : resolve(hostname))).finally(() => {
        if (inFlight.get(hostname) === started) inFlight.delete(hostname);
      });
      inFlight.set(hostname, started);
      lookup = started;
    }
    lookup.catch(() => undefined);
    try {
      return await Promise.race([lookup, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** `getaddrinfo`: every address of `hostname`, in the order the system returns them. */
const getaddrinfo: HostResolver = async (hostname) => {
  const found = (await lookupAll(hostname, { all: true, verbatim: true })) as unknown as LookupAddress[];
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
};

/**
 * The operating system's resolver (`getaddrinfo`, like every Node client),
 * all addresses in the order it returns them, bounded by
 * {@link boundedResolver}: {@link MAX_CONCURRENT_LOOKUPS} at a time,
 * {@link LOOKUP_TIMEOUT_MS} each.
 */
export const systemResolver: HostResolver = boundedResolver(getaddrinfo, {
  concurrency: MAX_CONCURRENT_LOOKUPS,
  timeoutMs: LOOKUP_TIMEOUT_MS,
});

/** `hostname` of a URL without the brackets of an IPv6 literal. */
export function bareHostname(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Parses and checks the form of a delivery target: an absolute `https://`
 * URL (also `http://` when `allowPrivate`), without credentials in it.
 * WHATWG URL parsing normalises numeric host forms (`http://2130706433/`,
 * `0x7f.1`) to dotted IPv4, so the address guard sees the real address.
 * @throws InputError naming the reason.
 */
export function parseTarget(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InputError('The target URL is not a valid absolute URL.');
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    const scheme = url.protocol.slice(0, -1);
    throw new InputError(
      allowPrivate
        ? `The target URL's scheme must be https or http, not ${scheme}.`
        : `The target URL's scheme must be https, not ${scheme}${scheme === 'http' ? ' (plain http is refused)' : ''}.`,
    );
  }
  if (url.username !== '' || url.password !== '') throw new InputError('The target URL must not carry credentials.');
  if (bareHostname(url) === '') throw new InputError('The target URL has no host.');
  return url;
}

/** Resolver answers that say "not now" rather than "no such name": a timeout, a name server failure. */
const TRANSIENT_LOOKUP_CODES: ReadonlySet<string> = new Set(['ETIMEOUT', 'EAI_AGAIN', 'ESERVFAIL', 'ECONNREFUSED']);

/**
 * A target whose name could not be resolved for now (timeout, name server
 * failure): 400 like any refused target when a caller registers it, but a
 * delivery should retry it later rather than drop it.
 */
export class TargetLookupFailure extends InputError {}

/** Address classes read with "an" (by sound: "an unspecified", "an IPv4-translated", but "a unique-local"). */
const READ_WITH_AN: ReadonlySet<AddressClass> = new Set(['unspecified', 'ipv4-translated', 'invalid']);

/** The indefinite article of an address class in a sentence. */
const article = (addressClass: AddressClass) => (READ_WITH_AN.has(addressClass) ? 'an' : 'a');

/**
 * Resolves `hostname` (or takes it as given when it is an IP literal) and,
 * unless `allowPrivate`, refuses it when any of its addresses is not public
 * (see {@link classifyAddress}); a name that resolves to one public and one
 * private address is refused as a whole.
 * @returns the addresses a connection may use.
 * @throws InputError naming the reason (never the private address a name resolved to).
 */
export async function resolveTarget(options: {
  hostname: string;
  allowPrivate: boolean;
  resolver: HostResolver;
}): Promise<ResolvedAddress[]> {
  const { hostname, allowPrivate } = options;
  const family = isIP(hostname);
  if (family !== 0) {
    const verdict = classifyAddress(hostname);
    if (!allowPrivate && !verdict.allowed) {
      throw new InputError(`The target address ${hostname} is refused: it is ${article(verdict.class)} ${verdict.class} address.`);
    }
    return [{ address: hostname, family: family === 6 ? 6 : 4 }];
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await options.resolver(hostname);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const message = `The target host ${hostname} does not resolve${typeof code === 'string' ? ` (${code})` : ''}.`;
    const refusal =
      typeof code === 'string' && TRANSIENT_LOOKUP_CODES.has(code) ? new TargetLookupFailure(message) : new InputError(message);
    refusal.cause = error;
    throw refusal;
  }
  if (addresses.length === 0) throw new InputError(`The target host ${hostname} does not resolve.`);
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const verdict = classifyAddress(address);
      if (!verdict.allowed) {
        throw new InputError(`The target host ${hostname} is refused: it resolves to ${article(verdict.class)} ${verdict.class} address.`);
      }
    }
  }
  return addresses;
}

/**
 * A `lookup` for `net.connect`/`tls.connect` that resolves through
 * {@link resolveTarget}, so a connection goes only to an address that was
 * checked in the same step (no second resolution an attacker's DNS could
 * answer differently: DNS-rebinding safe). Host and SNI stay the URL's name.
 */
export function guardedLookup(options: { allowPrivate: boolean; resolver: HostResolver }): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolveTarget({ hostname, allowPrivate: options.allowPrivate, resolver: options.resolver }).then(
      (addresses) => {
        const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : 0;
        const usable = wanted === 0 ? addresses : addresses.filter((entry) => entry.family === wanted);
        const first = usable[0];
        if (!first) {
          callback(Object.assign(new Error(`The target host ${hostname} has no IPv${wanted} address.`), { code: 'ENOTFOUND' }), '', 0);
          return;
        }
        if (lookupOptions.all) callback(null, usable);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
