import { describe, expect, it } from 'vitest';
import { type CallerContext, invokeRoute } from './route-call.js';
import { errorResult } from './tool-errors.js';

/** A caller whose API answers every call with `status`, `body` and `headers`. */
function callerAnswering(status: number, body: unknown, headers: Record<string, string> = {}): CallerContext {
  return {
    appRequest: async () => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } }),
    credential: 'dk_test',
    principal: { kind: 'device', agentId: 'alice', deviceId: 'dev_test' },
    requestId: 'req-test',
  };
}

describe('invokeRoute', () => {
  it('hands the Retry-After of a 503 (a dependency is down) to the model, as for a 429', async () => {
    const unavailable = { error: { code: 'unavailable', message: 'The database this request needs is unavailable right now.' } };
    const outcome = await invokeRoute(callerAnswering(503, unavailable, { 'retry-after': '2' }), 'agent-memory', '/mem/write', {});
    expect(outcome).toEqual({ ok: false, status: 503, error: unavailable, retryAfterSeconds: 2 });
    const result = errorResult(unavailable, 2);
    expect(result.content[0]).toEqual({
      type: 'text',
      text: 'unavailable: The database this request needs is unavailable right now. Retry after 2 s.',
    });
  });

  it('ignores a Retry-After on answers that are not worth retrying as they are', async () => {
    const full = { error: { code: 'insufficient_storage', message: 'The server is out of disk space.' } };
    const outcome = await invokeRoute(callerAnswering(507, full, { 'retry-after': '2' }), 'agent-memory', '/mem/write', {});
    expect(outcome).toEqual({ ok: false, status: 507, error: full });
  });
});
