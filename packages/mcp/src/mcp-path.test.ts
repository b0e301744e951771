import { request } from 'node:http';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpTestServer, startMcpTestServer } from './test-support/mcp-test-server.js';

/** Sends `method path` to the server with `headers` and `body` as written (node:http, so `..` segments reach the server unresolved). */
function send(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; contentType: string | undefined; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: hostname, port, path, method, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'], text }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

describe('/mcp is the MCP endpoint, and nothing below it is', () => {
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

  const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const headers = (credential?: string) => ({
    ...(credential ? { authorization: `Bearer ${credential}` } : {}),
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  });

  it('answers a path below /mcp with 404 not_found in the API’s error body, whatever the method or credential', async () => {
    const cases: Array<{ method: string; path: string; credential?: string }> = [
      { method: 'POST', path: '/mcp/foo', credential: t.keys.alice },
      { method: 'POST', path: '/mcp/', credential: t.keys.alice },
      { method: 'POST', path: '/mcp/a/b?x=1', credential: t.keys.alice },
      { method: 'POST', path: '/mcp/foo' },
      { method: 'GET', path: '/mcp/foo', credential: t.keys.alice },
      { method: 'OPTIONS', path: '/mcp/foo' },
      { method: 'POST', path: '/mcp/../x', credential: t.keys.alice },
      { method: 'POST', path: '/mcp/%2e%2e/x', credential: t.keys.alice },
    ];
    for (const { method, path, credential } of cases) {
      const answer = await send(t.server.url, method, path, headers(credential), method === 'POST' ? ping : undefined);
      expect({ method, path, status: answer.status }).toEqual({ method, path, status: 404 });
      expect(answer.contentType).toMatch(/^application\/json/);
      expect(JSON.parse(answer.text)).toEqual({ error: { code: 'not_found', message: expect.stringMatching(/^No route /) } });
    }
  });

  it('still answers at /mcp itself, with or without a query string', async () => {
    for (const path of ['/mcp', '/mcp?x=1']) {
      const answer = await send(t.server.url, 'POST', path, headers(t.keys.alice), ping);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    }
  });
});
