import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorReply, type RedisClientType } from 'redis';

/** Clients {@link closeRedisClient} is closing: their connection is no longer re-made. */
const closing = new WeakSet<RedisClientType>();

/** Clients whose connection {@link checkUnansweredConnection} is probing now. */
const probing = new WeakSet<RedisClientType>();

/**
 * The longest node-redis takes to notice, once destroyed, that it must stop
 * reconnecting (ms): its connect timeout (5 s at most here) plus the longest
 * reconnect delay (2.1 s), with margin.
 */
const RECONNECTION_STOP_BOUND_MS = 10_000;

/** Whether {@link closeRedisClient} is closing `client` (its reconnect strategy should then give up). */
export function isClosing(client: RedisClientType): boolean {
  return closing.has(client);
}

/**
 * Replaces `client`'s connection, which went silent. A server that went silent
 * without closing the connection (dead host, failover, dropped packets) leaves
 * node-redis 5 with a socket it believes ready: it writes every later command
 * to it, times none out once written, and keeps each in its reply queue until
 * the kernel gives up on the connection (~15 min). Destroying the client
 * rejects the commands still queued and frees the socket; connecting it again
 * makes a fresh connection with the client's own options (reconnect strategy
 * included), which calls made meanwhile wait for. Does nothing unless the
 * connection is ready and the client open and not being closed: a connection
 * being made is never destroyed, since node-redis would then finish making it
 * and leave it open.
 */
function replaceSilentConnection(client: RedisClientType): void {
  if (closing.has(client) || !client.isOpen || !client.isReady) return;
  client.destroy();
  // Each failed attempt is reported through the client's 'error' event.
  client.connect().catch(() => undefined);
}

/**
 * Called when a command written on `client`'s connection got no answer in
 * time: sends a PING on the same connection and replaces the connection
 * ({@link replaceSilentConnection}) only if that PING gets no answer within
 * `timeoutMs` (ms) either. A server that was only slow (a long script or a big
 * command stalls every connection; Redis answers in order) answers the PING
 * once it is done, and the connection and the commands in flight on it are
 * kept. One probe at a time per client; a connection lost or re-made meanwhile
 * is left to node-redis. Never throws; returns at once.
 */
export function checkUnansweredConnection(client: RedisClientType, timeoutMs: number): void {
  if (probing.has(client) || closing.has(client) || !client.isReady) return;
  probing.add(client);
  const epoch = client.socketEpoch;
  // An error reply is an answer too; a rejection without one (lost, destroyed, never written) is not.
  const answered = client.ping().then(
    () => true,
    (error: unknown) => error instanceof ErrorReply,
  );
  const unanswered = new AbortController();
  void Promise.race([answered, sleep(timeoutMs, false, { ref: false, signal: unanswered.signal })])
    .catch(() => false)
    .then((answer) => {
      unanswered.abort();
      probing.delete(client);
      if (!answer && client.socketEpoch === epoch) replaceSilentConnection(client);
    });
}

/**
 * Resolves once `done()` holds, checked on each connection event of `client`
 * ('ready', 'error', 'reconnecting', 'end'), or after `boundMs`.
 */
function untilConnectionEvent(client: RedisClientType, done: () => boolean, boundMs: number): Promise<void> {
  const events = ['ready', 'error', 'reconnecting', 'end'] as const;
  return new Promise((resolve) => {
    const finish = () => {
      for (const event of events) client.off(event, check);
      clearTimeout(timer);
      resolve();
    };
    const check = () => {
      if (done()) finish();
    };
    const timer = setTimeout(finish, boundMs);
    timer.unref();
    for (const event of events) client.on(event, check);
  });
}

/**
 * Closes `client`, waiting at most `timeoutMs` (ms) for Redis, then destroys
 * its socket whether Redis answered or not. (node-redis's own `close()` waits
 * for the answers for ever, and a client it marked closed can no longer be
 * destroyed, so a silent server would keep the socket, and the process, alive.)
 * - Connected: resolves once every command already sent has its answer.
 * - Reconnecting: the client's reconnect strategy must give up once
 *   {@link isClosing} holds; resolves once the attempt in progress failed, or
 *   succeeded and answered as above. When `timeoutMs` passes first, resolves
 *   only once node-redis has stopped its reconnection (its pending delay or
 *   attempt over, at most ~7 s), so no timer or socket of it outlives the call.
 * Commands made meanwhile may be rejected.
 */
export async function closeRedisClient(client: RedisClientType, timeoutMs: number): Promise<void> {
  if (!client.isOpen) return;
  closing.add(client);
  const deadline = sleep(timeoutMs, undefined, { ref: false });
  if (!client.isReady) await untilConnectionEvent(client, () => client.isReady || !client.isOpen, timeoutMs);
  // Redis answers in order: once this PING has its answer, so has every command sent before it.
  if (client.isReady && client.isOpen) await Promise.race([client.ping().catch(() => undefined), deadline]);
  if (!client.isOpen) return;
  const reconnecting = !client.isReady;
  client.destroy();
  // Destroyed between attempts, node-redis still waits out its delay (or the attempt in progress) before it stops.
  if (reconnecting) await untilConnectionEvent(client, () => true, RECONNECTION_STOP_BOUND_MS);
}
