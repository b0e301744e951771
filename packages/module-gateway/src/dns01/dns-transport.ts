import { createSocket } from 'node:dgram';
import { connect, isIPv6 } from 'node:net';

/** A DNS server address. */
export interface DnsServerAddress {
  host: string;
  port: number;
}

/**
 * Parses `host:port`, `[v6]:port`, or a bare host (port 53).
 * @throws Error when the port is not 1–65535.
 */
export function parseDnsServer(value: string): DnsServerAddress {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) return { host: bracketed[1] as string, port: checkPort(bracketed[2]) };
  if (isIPv6(value)) return { host: value, port: 53 };
  const [host, port, ...rest] = value.split(':');
  if (!host || rest.length > 0) throw new Error(`"${value}" is not host:port.`);
  return { host, port: checkPort(port) };
}

function checkPort(raw: string | undefined): number {
  if (raw === undefined) return 53;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`DNS port "${raw}" is not 1–65535.`);
  return port;
}

/** Options of {@link exchangeDnsMessage}. */
export interface ExchangeOptions {
  server: DnsServerAddress;
  message: Buffer;
  /** Milliseconds to wait for one answer (default 5000). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Sends one DNS message and returns the answer with the same id: over UDP
 * first, and over TCP (RFC 1035 §4.2.2 length framing) when the UDP answer
 * is truncated or the message is over 512 bytes (RFC 7766).
 * @throws Error on timeout, abort, or a network error (as `cause`).
 */
export async function exchangeDnsMessage(options: ExchangeOptions): Promise<Buffer> {
  if (options.message.length > 512) return exchangeTcp(options);
  const answer = await exchangeUdp(options);
  const truncated = (answer.readUInt16BE(2) & 0x0200) !== 0;
  return truncated ? exchangeTcp(options) : answer;
}

function deadline<T>(options: ExchangeOptions, run: (settle: (error: Error | null, value?: T) => void) => () => void): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const { host, port } = options.server;
  return new Promise<T>((resolve, reject) => {
    let done = false;
    let cleanup: () => void = () => undefined;
    const settle = (error: Error | null, value?: T) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      cleanup();
      if (error) reject(error);
      else resolve(value as T);
    };
    const timer = setTimeout(() => settle(new Error(`The DNS server ${host}:${port} did not answer within ${timeoutMs} ms.`)), timeoutMs);
    const onAbort = () => settle(new Error('The DNS exchange was aborted.', { cause: options.signal?.reason }));
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    cleanup = run(settle);
  });
}

function exchangeUdp(options: ExchangeOptions): Promise<Buffer> {
  const { host, port } = options.server;
  const id = options.message.readUInt16BE(0);
  return deadline<Buffer>(options, (settle) => {
    const socket = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
    socket.on('error', (error) => settle(new Error(`DNS over UDP to ${host}:${port} failed: ${error.message}`, { cause: error })));
    socket.on('message', (answer) => {
      if (answer.length >= 12 && answer.readUInt16BE(0) === id) settle(null, answer);
    });
    socket.send(options.message, port, host);
    return () => socket.close();
  });
}

function exchangeTcp(options: ExchangeOptions): Promise<Buffer> {
  const { host, port } = options.server;
  return deadline<Buffer>(options, (settle) => {
    const socket = connect({ host, port });
    let received = Buffer.alloc(0);
    socket.on('error', (error) => settle(new Error(`DNS over TCP to ${host}:${port} failed: ${error.message}`, { cause: error })));
    socket.on('connect', () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(options.message.length, 0);
      socket.write(Buffer.concat([length, options.message]));
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) {
        settle(null, received.subarray(2, 2 + received.readUInt16BE(0)));
      }
    });
    socket.on('end', () => settle(new Error(`The DNS server ${host}:${port} closed the TCP connection without a full answer.`)));
    return () => socket.destroy();
  });
}
