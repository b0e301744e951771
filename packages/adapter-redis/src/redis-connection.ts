import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClientType } from 'redis';

/** Clients {@link closeRedisClient} is closing: their connection is no longer re-made. */
const closing = new WeakSet<RedisClientType>();

/**
 * Replaces `client`'s connection after a command written on it got no answer in
 * time. A server that went silent without closing the connection (dead host,
 * failover, dropped packets) leaves node-redis 5 with a socket it believes
 * ready: it writes every later command to it, times none out once written, and
 * keeps each in its reply queue until the kernel gives up on the connection
 * (~15 min). Destroying the client rejects the commands still queued and frees
 * the socket; connecting it again makes a fresh connection with the client's
 * own options (reconnect strategy included), which calls made meanwhile wait
 * for. Does nothing unless the connection is ready and the client open and not
 * being closed: a connection being made is never destroyed, since node-redis
 * would then finish making it and leave it open.
 */
export function replaceSilentConnection(client: RedisClientType): void {
  if (closing.has(client) || !client.isOpen || !client.isReady) return;
  client.destroy();
  // Each failed attempt is reported through the client's 'error' event.
  client.connect().catch(() => undefined);
}

/**
 * Closes `client` once every command already sent has its answer, waiting at
 * most `timeoutMs`, then destroys its socket whether Redis answered or not.
 * (node-redis's own `close()` waits for those answers for ever, and a client it
 * marked closed can no longer be destroyed, so a silent server would keep the
 * socket, and the process, alive.) Commands made meanwhile may be rejected.
 */
export async function closeRedisClient(client: RedisClientType, timeoutMs: number): Promise<void> {
  if (!client.isOpen) return;
  closing.add(client);
  // Redis answers in order: once this PING has its answer, so has every command sent before it.
  await Promise.race([client.ping().catch(() => undefined), sleep(timeoutMs, undefined, { ref: false })]);
  if (client.isOpen) client.destroy();
}
