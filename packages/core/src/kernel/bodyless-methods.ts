import type { MiddlewareHandler } from 'hono';
import { InputError } from '../errors.js';

/** Methods whose requests carry no body here (RFC 9110 §9.3.1, §9.3.2: a body has no defined meaning). */
const BODYLESS = new Set(['GET', 'HEAD']);

/**
 * Refuses a GET or HEAD that announces a body (`Transfer-Encoding`, or a
 * `Content-Length` above 0) with 400 `invalid_request` and `Connection:
 * close`. Node reads such a body to its end whatever it holds, and
 * @hono/node-server does not bound that read for these methods: a body
 * trickled a byte at a time kept the connection open past every timeout.
 * Closing after the answer ends the read.
 * @throws InputError (400) as described, answered by the app's error handler.
 */
export function refuseBodiesOnBodylessMethods(): MiddlewareHandler {
  return async (c, next) => {
    if (BODYLESS.has(c.req.method)) {
      const length = c.req.header('content-length');
      if (c.req.header('transfer-encoding') !== undefined || (length !== undefined && length.trim() !== '0')) {
        c.header('Connection', 'close');
        throw new InputError(`A ${c.req.method} request has no body here; send it without one.`);
      }
    }
    await next();
  };
}
