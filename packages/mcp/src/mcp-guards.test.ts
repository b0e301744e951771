import { createHash } from 'node:crypto';
import { sqlDatabases } from '@agentinfra/testkit';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { answerWithin, withoutSelfCancellations } from './batch-guards.js';
import { checkJsonBounds } from './json-bounds.js';
import { type McpTestServer, startMcpTestServer } from './test-support/mcp-test-server.js';

/** A JSON-RPC answer of /mcp. */
type RpcAnswer = {
  jsonrpc: '2.0';
  id: number | null;
  result?: { structuredContent?: Record<string, unknown>; isError?: boolean; content?: Array<{ text?: string }> };
  error?: { code: number; message: string; data?: unknown };
};

describe('/mcp answers every POST, and refuses a body big because of its structure', () => {
  let t: McpTestServer;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await sqlDatabases()[0]!.create();
    cleanup = fixture.cleanup;
    t = await startMcpTestServer(fixture.db);
  });
  afterAll(async () => {
    await t?.stop();
    await cleanup?.();
  });

  /**
   * POSTs `body` with alice's key and `headers`, giving up after 10 s (without the fix, the cancel batch is never
   * answered).
   */
  async function post(body: string | Uint8Array, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
    const response = await fetch(`${t.server.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.keys.alice}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    return { status: response.status, text: await response.text() };
  }

  const cancel = (requestId: number | string) =>
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'changed my mind' } });

  it('answers a batch that cancels its own request with the request’s result', async () => {
    const ping = await post(`[{"jsonrpc":"2.0","id":5,"method":"ping"},${cancel(5)}]`);
    expect(ping.status).toBe(200);
    expect(JSON.parse(ping.text)).toEqual([{ jsonrpc: '2.0', id: 5, result: {} }]);

    const query = await post(
      `[{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"memory_query","arguments":{"q":"deploy"}}},${cancel(6)}]`,
    );
    expect(query.status).toBe(200);
    const [answer] = JSON.parse(query.text) as RpcAnswer[];
    expect(answer?.id).toBe(6);
    expect(answer?.result?.isError).toBeUndefined();
    expect(answer?.result?.structuredContent).toHaveProperty('hits');

    // The cancellation first, and one naming a request of another POST, kept: the SDK finds nothing to cancel.
    const both = await post(`[${cancel(7)},{"jsonrpc":"2.0","id":7,"method":"ping"},${cancel(99)}]`);
    expect(JSON.parse(both.text)).toEqual([{ jsonrpc: '2.0', id: 7, result: {} }]);
  });

  // Review: a batch of one request was answered with a bare object; JSON-RPC answers every batch with an array.
  it('answers a batch of one request with a one-element array, and a single message with an object', async () => {
    const ping = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'batch', version: '1' } },
    });
    const one = await post(`[${ping(1)}]`);
    expect(one.status).toBe(200);
    expect(JSON.parse(one.text)).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    const [initialized] = JSON.parse((await post(`[${initialize}]`)).text) as RpcAnswer[];
    expect(initialized).toMatchObject({ id: 2, result: { protocolVersion: '2025-03-26' } });
    const withNotification = await post(`[${ping(3)},{"jsonrpc":"2.0","method":"notifications/initialized"}]`);
    expect(JSON.parse(withNotification.text)).toEqual([{ jsonrpc: '2.0', id: 3, result: {} }]);
    expect(JSON.parse((await post(ping(4))).text)).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
    // Notifications only: 202 and no body; a batch the SDK refuses whole: one error object, as JSON-RPC answers it.
    expect(await post('[{"jsonrpc":"2.0","method":"notifications/initialized"}]')).toEqual({ status: 202, text: '' });
    const invalid = await post('[{"jsonrpc":"2.0","id":5}]');
    expect(invalid.status).toBe(400);
    expect(JSON.parse(invalid.text)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  // Review: batches were taken from clients of MCP 2025-06-18 and later, which removed them.
  it('refuses a batch from a client of MCP 2025-06-18 or later with -32600 and no id, running none of it', async () => {
    const put = (id: number, key: string) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'memory_kv_put', arguments: { key, value: 1, scope: ['self'] } },
      });
    const get = async (key: string) =>
      JSON.parse(
        (
          await post(
            JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name: 'memory_kv_get', arguments: { key, scope: ['self'] } },
            }),
          )
        ).text,
      ) as RpcAnswer;
    for (const version of ['2025-06-18', '2025-11-25']) {
      const refused = await post(`[${put(1, `batch-${version}`)},${put(2, `batch-${version}-b`)}]`, { 'mcp-protocol-version': version });
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.text)).toEqual({
        jsonrpc: '2.0',
        error: {
          code: -32600,
          message: `Invalid Request: JSON-RPC batches are not part of MCP ${version} (removed in 2025-06-18): send one message per POST.`,
          data: { protocol_version: version },
        },
      });
      expect((await get(`batch-${version}`)).result?.isError).toBe(true);
      // The same messages one per POST are answered.
      const single = await post(put(3, `single-${version}`), { 'mcp-protocol-version': version });
      expect(JSON.parse(single.text)).toMatchObject({ jsonrpc: '2.0', id: 3, result: { structuredContent: { key: `single-${version}` } } });
    }
    // A batch initializing 2025-06-18 or later (no header before initialization) is refused the same way.
    const initialize = (protocolVersion: string) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'initialize',
        params: { protocolVersion, capabilities: {}, clientInfo: { name: 'batch', version: '1' } },
      });
    const refusedInit = await post(`[${initialize('2025-06-18')}]`);
    expect(refusedInit.status).toBe(400);
    expect(JSON.parse(refusedInit.text)).toMatchObject({ error: { code: -32600, data: { protocol_version: '2025-06-18' } } });
    expect(JSON.parse(refusedInit.text)).not.toHaveProperty('id');
    // Revisions that have batches keep them: 2025-03-26 by header, by initialize, or by default (no header).
    const olderRevisions: Record<string, string>[] = [
      { 'mcp-protocol-version': '2025-03-26' },
      { 'mcp-protocol-version': '2024-11-05' },
      {},
    ];
    for (const headers of olderRevisions) {
      const batch = await post(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, headers);
      expect(batch.status).toBe(200);
      expect(JSON.parse(batch.text)).toEqual([
        { jsonrpc: '2.0', id: 1, result: {} },
        { jsonrpc: '2.0', id: 2, result: {} },
      ]);
    }
    expect(JSON.parse((await post(`[${initialize('2025-03-26')}]`)).text)).toMatchObject([
      { id: 9, result: { protocolVersion: '2025-03-26' } },
    ]);
  });

  // Review: two requests of a batch with one id both ran (two kv writes) and only one was answered, not as an array.
  it('refuses a batch that repeats a request id before running any of it', async () => {
    const put = (id: number | string, key: string) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'memory_kv_put', arguments: { key, value: 1, scope: ['self'] } },
      });
    const repeated = await post(`[${put(42, 'dup-a')},${put(42, 'dup-b')}]`);
    expect(repeated.status).toBe(400);
    expect(JSON.parse(repeated.text)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringContaining('more than one request with id 42') },
    });
    const get = (key: string) =>
      post(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'memory_kv_get', arguments: { key, scope: ['self'] } },
        }),
      );
    for (const key of ['dup-a', 'dup-b']) expect(JSON.parse((await get(key)).text).result.isError).toBe(true);
    // 42 and "42" are different ids, as for the SDK.
    const distinct = await post(`[${put(42, 'dup-a')},${put('42', 'dup-b')}]`);
    expect(distinct.status).toBe(200);
    expect((JSON.parse(distinct.text) as RpcAnswer[]).map((answer) => answer.id)).toEqual([42, '42']);
  });

  // Review: a refusal naming no request answered `"id": null` to every client; MCP's schema since 2025-06-18 has no null id.
  it('leaves the id out of an error naming no request for a client of 2025-06-18 or later, and keeps "id": null for others', async () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_kv_put","arguments":{"key":"deep","scope":["self"],"value":${'['.repeat(40)}${']'.repeat(40)}}}}`;
    const refusals: Record<string, (headers: Record<string, string>) => Promise<{ status: number; text: string }>> = {
      'not JSON': (headers) => post('{not json', headers),
      'not UTF-8': (headers) => post(Buffer.from([0x7b, 0xc3, 0x28, 0x7d]), headers),
      'nested too deep': (headers) => post(deep, headers),
      'no JSON-RPC message (the SDK)': (headers) => post('{"jsonrpc":"2.0","id":5}', headers),
      'not JSON content (the SDK)': (headers) =>
        post('{"jsonrpc":"2.0","id":1,"method":"ping"}', { ...headers, 'content-type': 'text/plain' }),
      GET: async (headers) => {
        const response = await fetch(`${t.server.url}/mcp`, { headers: { authorization: `Bearer ${t.keys.alice}`, ...headers } });
        return { status: response.status, text: await response.text() };
      },
    };
    for (const [name, send] of Object.entries(refusals)) {
      for (const version of ['2025-06-18', '2025-11-25']) {
        const { status, text } = await send({ 'mcp-protocol-version': version });
        expect(status, `${name}, ${version}`).toBeGreaterThanOrEqual(400);
        const body = JSON.parse(text);
        expect(body, `${name}, ${version}`).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
        expect(body, `${name}, ${version}`).not.toHaveProperty('id');
        // What the SDK's client (a strict one) accepts: its schema of the latest revision refuses `"id": null`.
        expect(JSONRPCMessageSchema.safeParse(body).success, `${name}, ${version}`).toBe(true);
      }
      // JSON-RPC 2.0 §5 for 2025-03-26 and older, no header (read as 2025-03-26) and a revision the SDK does not know.
      const others: Record<string, string>[] = [
        { 'mcp-protocol-version': '2025-03-26' },
        { 'mcp-protocol-version': '2024-11-05' },
        {},
        { 'mcp-protocol-version': '2099-01-01' },
      ];
      for (const headers of others) {
        const { text } = await send(headers);
        expect(JSON.parse(text), `${name}, ${JSON.stringify(headers)}`).toMatchObject({ jsonrpc: '2.0', id: null });
      }
    }
  });

  it('surfaces a refusal naming no request to the SDK client as its HTTP error, and the client goes on', async () => {
    const client = await t.connect(t.keys.alice);
    const refused = await client
      .callTool({
        name: 'memory_kv_put',
        arguments: { key: 'deep', scope: ['self'], value: JSON.parse(`${'['.repeat(40)}${']'.repeat(40)}`) },
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(400);
    const answered = JSON.parse((refused as Error).message.slice((refused as Error).message.indexOf('{')));
    expect(answered).toEqual({ jsonrpc: '2.0', error: expect.objectContaining({ code: -32600, data: { max_depth: 34 } }) });
    expect(await client.ping()).toEqual({});
  });

  it('answers a cancellation sent on its own with 202 (stateless: no request of another POST to cancel)', async () => {
    const lone = await post(cancel(5));
    expect(lone.status).toBe(202);
  });

  /** A tools/call of `name` whose arguments have `members` keys besides `fixed` (JSON members text). */
  const wideCall = (name: string, fixed: string, members: number) => {
    const keys = Array.from({ length: members }, (_, index) => `"k${index}":0`).join(',');
    return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":{${fixed},${keys}}}}`;
  };

  it('refuses a body with more object members than the API takes with 400, whatever its size, before parsing it', async () => {
    for (const body of [
      // Under the API's 1 MiB: 95,000 argument keys.
      wideCall('memory_query', '"q":"x"', 95_000),
      wideCall('memory_query', '"q":"x"', 600_000),
      wideCall('artifacts_upload', '"upload_url":"http://x/y","content":"abc"', 600_000),
    ]) {
      const { status, text } = await post(body);
      expect(status).toBe(400);
      expect(JSON.parse(text)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: expect.stringMatching(/more than 21000 object members .*tool arguments: 20000/),
          data: { max_members: 21_000 },
        },
      });
    }
  });

  // Review: the API refused more than 50,000 array elements before parsing; /mcp parsed a flat array under 1 MiB first.
  it('refuses a body with more array elements than the API takes with 400, before parsing it, and takes a batch within them', async () => {
    const zeros = (count: number) => Array(count).fill('0').join(',');
    const kvPut = (id: number, value: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"memory_kv_put","arguments":{"key":"flat${id}","scope":["self"],"value":${value}}}}`;
    const bodies = {
      // 400,000 elements in 800 KB: under the API's 1 MiB and the 1,000 commas allowed past it.
      'one flat array': kvPut(1, `[${zeros(400_000)}]`),
      // Not a tool call: nothing after /mcp would ever refuse it.
      'a listing': `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"flat":[${zeros(51_001)}]}}}`,
      'arrays adding up past the bound': `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"a":[${zeros(30_000)}],"b":[[${zeros(21_001)}]]}}}`,
    };
    const parse = vi.spyOn(JSON, 'parse');
    try {
      for (const [name, body] of Object.entries(bodies)) {
        expect(body.length, name).toBeLessThan(t.server.kernel.config.http.bodyLimitBytes);
        const { status, text } = await post(body);
        expect(status, name).toBe(400);
        expect(
          parse.mock.calls.some(([parsed]) => parsed === body),
          name,
        ).toBe(false);
        expect(JSON.parse(text), name).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32600,
            message: expect.stringMatching(/more than 51000 array elements in all .*tool arguments: 50000/),
            data: { max_array_elements: 51_000 },
          },
        });
        // A client of 2025-06-18 or later gets the same refusal without an id.
        const latest = await post(body, { 'mcp-protocol-version': '2025-11-25' });
        expect(latest.status, name).toBe(400);
        expect(JSON.parse(latest.text), name).toEqual({
          jsonrpc: '2.0',
          error: expect.objectContaining({ data: { max_array_elements: 51_000 } }),
        });
      }
    } finally {
      parse.mockRestore();
    }
    // The batch's own array counts apart from the arguments: 100 messages of 500 elements each (50,100 in all) are
    // each within the API's bound, and each gets the API's answer.
    const batch = await post(`[${Array.from({ length: 100 }, (_, index) => kvPut(index + 1, `[${zeros(500)}]`)).join(',')}]`);
    expect(batch.status).toBe(200);
    const answers = JSON.parse(batch.text) as RpcAnswer[];
    expect(answers).toHaveLength(100);
    for (const answer of answers) expect(answer.result?.isError, JSON.stringify(answer)).not.toBe(true);
  });

  it('refuses a body over the API’s limit that is big because of its structure with 413, before parsing it', async () => {
    // A flat array of short strings as a kv value: no members, 50,000 elements (within the bound on array elements).
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_kv_put","arguments":{"key":"huge","scope":["self"],"value":[${Array(50_000).fill('"twenty-five characters.."').join(',')}]}}}`;
    expect(body.length).toBeGreaterThan(t.server.kernel.config.http.bodyLimitBytes);
    const { status, text } = await post(body);
    expect(status).toBe(413);
    expect(JSON.parse(text)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: expect.stringMatching(/over 1048576 bytes .*more than 1000 array elements and object members/),
        data: { max_body_bytes: 1_048_576, max_members: 1_000 },
      },
    });
  });

  it('still runs a tool call under the API’s limit with many keys, and uploads artifact content over it', async () => {
    const wide = JSON.parse((await post(wideCall('memory_query', '"q":"x"', 2_000))).text) as RpcAnswer;
    // Answered by the API (its schema refuses the unknown fields), not refused by /mcp.
    expect(wide.result?.isError).toBe(true);
    expect(wide.result?.content?.[0]?.text).toMatch(/^invalid_request: /);

    const size = 5 * 1024 * 1024; // 6.7 MiB in base64: over the API's 1 MiB, within /mcp's 8 MiB
    const registered = JSON.parse(
      (
        await post(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 2,
            method: 'tools/call',
            params: { name: 'artifacts_register', arguments: { key: 'five.bin', mime: 'application/octet-stream', size } },
          }),
        )
      ).text,
    ) as RpcAnswer;
    const bytes = Buffer.alloc(size, 7);
    const upload = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: {
          name: 'artifacts_upload',
          arguments: {
            upload_url: registered.result?.structuredContent?.upload_url,
            content: bytes.toString('base64'),
            encoding: 'base64',
          },
        },
      }),
    );
    expect(upload.status).toBe(200);
    expect((JSON.parse(upload.text) as RpcAnswer).result?.structuredContent).toEqual({
      size,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
  });
});

describe('the guards of /mcp', () => {
  it('counts commas outside strings only, escapes included', () => {
    const count = (text: string, max: number) => checkJsonBounds(text).commas > max;
    expect(count('[1,2,3]', 2)).toBe(false);
    expect(count('[1,2,3,4]', 2)).toBe(true);
    expect(count('{"a":",,,,,,","b":"\\",,,,"}', 1)).toBe(false);
    expect(count('["\\\\",1,2]', 1)).toBe(true);
    expect(count('["é,",1]', 1)).toBe(false);
  });

  it('drops only the cancellations of requests in the same batch, ids compared as the SDK does', () => {
    const ping = { jsonrpc: '2.0', id: 5, method: 'ping' };
    const cancel = (requestId: unknown) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });
    expect(withoutSelfCancellations([ping, cancel(5)])).toEqual([ping]);
    const kept = [ping, cancel('5'), cancel(6)];
    expect(withoutSelfCancellations(kept)).toBe(kept);
    expect(withoutSelfCancellations(cancel(5))).toEqual(cancel(5));
  });

  it('answers after the deadline with the responses sent and a -32001 error for each other request, and runs onExpiry', async () => {
    const sent: JSONRPCMessage[] = [];
    const transport = { send: async (message: JSONRPCMessage) => void sent.push(message) };
    const onExpiry = vi.fn();
    const answer = await answerWithin(
      transport,
      async () => {
        await transport.send({ jsonrpc: '2.0', id: 1, result: {} });
        return new Promise<Response>(() => undefined);
      },
      { ids: [1, 'two'], timeoutMs: 50, onExpiry },
    );
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      {
        jsonrpc: '2.0',
        id: 'two',
        error: { code: -32001, message: 'Request timed out: no answer within 50 ms.', data: { timeout_ms: 50 } },
      },
    ]);
    expect(sent).toHaveLength(1);
    expect(onExpiry).toHaveBeenCalledOnce();

    const quick = await answerWithin(transport, async () => new Response('ok'), { ids: [1], timeoutMs: 50, onExpiry });
    expect(await quick.text()).toBe('ok');
    expect(onExpiry).toHaveBeenCalledOnce();
  });
});
