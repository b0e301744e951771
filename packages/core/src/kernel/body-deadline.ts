import { ClientClosedRequestError, RequestTimeoutError } from '../errors.js';

/**
 * The chunks of a request body, refused once the whole body has taken more
 * than `timeoutMs` to arrive (counted from the first read), so that a client
 * sending a body slowly, or declaring a length and never sending it, holds
 * its connection for at most that long whether or not it authenticated
 * (#11's slow-client case). An error of the underlying stream (the client
 * closed the connection) becomes a {@link ClientClosedRequestError}.
 * @param timeoutMs milliseconds for the whole body.
 * @throws RequestTimeoutError (408) when the time is up, ClientClosedRequestError (499) when the client went away.
 */
export async function* withinDeadline(chunks: AsyncIterable<Uint8Array>, timeoutMs: number): AsyncGenerator<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => resolve('expired'), Math.max(0, deadline - Date.now()));
    });
    let next: IteratorResult<Uint8Array> | 'expired';
    try {
      next = await Promise.race([iterator.next(), expired]);
    } catch {
      throw new ClientClosedRequestError();
    } finally {
      clearTimeout(timer);
    }
    if (next === 'expired') {
      throw new RequestTimeoutError(`The request body did not arrive within ${Math.round(timeoutMs / 1000)} s.`);
    }
    if (next.done) return;
    yield next.value;
  }
}
