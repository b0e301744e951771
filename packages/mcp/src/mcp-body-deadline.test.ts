import { connect } from 'node:net';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpTestServer, startMcpTestServer } from './test-support/mcp-test-server.js';

const BODY_TIMEOUT_MS = 400;

describe('/mcp with a body that never arrives', () => {
  let t: McpTestServer;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await sqlDatabases()[0]!.create();
    cleanup = fixture.cleanup;
    t = await startMcpTestServer(fixture.db, { bodyTimeoutMs: BODY_TIMEOUT_MS });
  });
  afterAll(async () => {
    await t?.stop();
    await cleanup?.();
  });

  it('answers 408 and closes the connection after the API’s body deadline, as a JSON route does', async () => {
    const { hostname, port } = new URL(t.server.url);
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
    });
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: x\r\nauthorization: Bearer ${t.keys.alice}\r\ncontent-type: application/json\r\n` +
        'accept: application/json, text/event-stream\r\ncontent-length: 1000\r\n\r\n{',
    );
    await new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // Only the body deadline answers 408 (the idle timeout, 120 s by default, closes without a word; a hang fails the test's timeout).
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
  });
});
