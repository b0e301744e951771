import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentInfraClient } from './index.js';
import { seedAgent } from './test-support/agent.js';
import { failureOf } from './test-support/failure-of.js';
import { startServer, type TestServer } from './test-support/serve.js';

// Regression: a missing file threw Node's raw ENOENT, a wrong size for bytes and a directory path surfaced as
// network_error "fetch failed", and the directory left a pending artifact registered on the server.
describe('artifacts.upload checks its local input before registering anything', () => {
  let server: TestServer;
  let alice: AgentInfraClient;
  const dir = mkdtempSync(join(tmpdir(), 'client-upload-checks-'));

  beforeAll(async () => {
    server = await startServer();
    ({ agent: alice } = await seedAgent(server.url, 'alice'));
  }, 60_000);
  afterAll(() => server?.stop());

  async function registeredKeys(): Promise<string[]> {
    return (await alice.artifacts.list({ agent_id: 'alice' })).artifacts.map((artifact) => artifact.key);
  }

  it('a missing file path: invalid_request naming data, nothing registered', async () => {
    const missing = join(dir, 'nope.txt');
    const error = await failureOf(alice.artifacts.upload({ agent_id: 'alice', key: 'nope.txt', mime: 'text/plain', data: missing }));
    expect(error).toMatchObject({ status: 0, code: 'invalid_request', details: { fields: [{ path: 'data' }] } });
    expect(error.message).toBe(`Cannot upload ${missing}: no such file.`);
    expect(await registeredKeys()).toEqual([]);
  });

  it('a directory path: invalid_request, nothing registered', async () => {
    const error = await failureOf(
      alice.artifacts.upload({ agent_id: 'alice', key: 'dir.bin', mime: 'application/octet-stream', data: dir }),
    );
    expect(error).toMatchObject({ status: 0, code: 'invalid_request', message: `Cannot upload ${dir}: not a regular file.` });
    expect(await registeredKeys()).toEqual([]);
  });

  it('bytes with a wrong size: invalid_request naming size, nothing registered', async () => {
    const error = await failureOf(
      alice.artifacts.upload({
        agent_id: 'alice',
        key: 'wrongsize.bin',
        mime: 'application/octet-stream',
        data: new Uint8Array([1, 2, 3]),
        size: 5,
      }),
    );
    expect(error).toMatchObject({ status: 0, code: 'invalid_request', details: { fields: [{ path: 'size' }] } });
    expect(error.message).toMatch(/^size is 5 but data holds 3 bytes/);
    expect(await registeredKeys()).toEqual([]);
  });

  it('a file with a wrong stated size: invalid_request, nothing registered', async () => {
    const path = join(dir, 'three.bin');
    writeFileSync(path, 'abc');
    const error = await failureOf(
      alice.artifacts.upload({ agent_id: 'alice', key: 'three.bin', mime: 'application/octet-stream', data: path, size: 4 }),
    );
    expect(error).toMatchObject({
      status: 0,
      code: 'invalid_request',
      message: expect.stringMatching(/^size is 4 but data holds 3 bytes/),
    });
    expect(await registeredKeys()).toEqual([]);
  });

  it('a stream shorter or longer than its size: invalid_request as it is read, not network_error', async () => {
    const short = await failureOf(
      alice.artifacts.upload({
        agent_id: 'alice',
        key: 'short.bin',
        mime: 'application/octet-stream',
        data: Readable.from([Buffer.from('abc')]),
        size: 5,
      }),
    );
    expect(short).toMatchObject({ status: 0, code: 'invalid_request', message: 'data holds 3 bytes, not the 5 stated in size.' });
    const long = await failureOf(
      alice.artifacts.upload({
        agent_id: 'alice',
        key: 'long.bin',
        mime: 'application/octet-stream',
        data: Readable.from([Buffer.from('abcdef')]),
        size: 5,
      }),
    );
    expect(long).toMatchObject({ status: 0, code: 'invalid_request', message: 'data holds more than the 5 bytes stated in size.' });
  });

  it('still uploads a file whose stated size is right', async () => {
    const path = join(dir, 'right.txt');
    writeFileSync(path, 'right\n');
    const committed = await alice.artifacts.upload({ agent_id: 'alice', key: 'right.txt', mime: 'text/plain', data: path, size: 6 });
    expect(committed).toMatchObject({ status: 'committed', size: 6 });
  });
});
