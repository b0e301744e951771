import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { StdioLineTransport } from './stdio-line-transport.js';

/** A started transport on in-memory pipes, with what it received, wrote and reported. */
async function pipes(maxLineBytes?: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const received: JSONRPCMessage[] = [];
  const reported: string[] = [];
  let written = '';
  stdout.on('data', (chunk: Buffer) => (written += chunk.toString()));
  const transport = new StdioLineTransport({ stdin, stdout, onInvalidLine: (line) => reported.push(line), maxLineBytes });
  transport.onmessage = (message) => received.push(message);
  await transport.start();
  const ended = new Promise((resolve) => stdin.once('end', resolve));
  return {
    stdin,
    transport,
    received,
    reported,
    async end() {
      stdin.end();
      await ended;
      await new Promise((resolve) => setImmediate(resolve));
      return written
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { id?: unknown; error?: { code: number; message: string } });
    },
  };
}

describe('the stdio line transport', () => {
  it('reads messages split across chunks, CRLF line ends and a last line without a newline', async () => {
    const t = await pipes();
    t.stdin.write('{"jsonrpc":"2.0","id":1,');
    t.stdin.write('"method":"ping"}\r\n\r\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    t.stdin.write('{"jsonrpc":"2.0","id":2,"method":"ping"}');
    expect(await t.end()).toEqual([]);
    expect(t.received).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
    expect(t.reported).toEqual([]);
  });

  it('answers bytes that are not UTF-8 with -32700, and skips a line over the limit to its end, answering -32600', async () => {
    const t = await pipes(64);
    t.stdin.write(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a]));
    t.stdin.write(`{"jsonrpc":"2.0","id":"long","method":"ping","params":{"pad":"${'x'.repeat(40)}`);
    t.stdin.write(`${'x'.repeat(100)}"}}\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n`);
    const answers = await t.end();
    expect(answers).toEqual([
      { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: line 1 of stdin is not JSON.' } },
      { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: line 2 of stdin is over 64 bytes.' } },
    ]);
    expect(t.received).toEqual([{ jsonrpc: '2.0', id: 3, method: 'ping' }]);
    expect(t.reported).toEqual([
      'Parse error: line 1 of stdin is not JSON. Answered with JSON-RPC error -32700.',
      'Invalid Request: line 2 of stdin is over 64 bytes. Answered with JSON-RPC error -32600.',
    ]);
  });

  it('stops reading when closed', async () => {
    const t = await pipes();
    let closed = false;
    t.transport.onclose = () => (closed = true);
    await t.transport.close();
    expect(t.stdin.isPaused()).toBe(true);
    t.stdin.resume();
    t.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    expect(await t.end()).toEqual([]);
    expect(t.received).toEqual([]);
    expect(closed).toBe(true);
  });
});
