import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exampleDir = fileURLToPath(new URL('..', import.meta.url));

/** The example as its README runs it (`node --import tsx src/main.ts`), on any free port, with its output so far. */
interface RunningExample {
  child: ChildProcess;
  url: string;
  deviceKey: string;
  output: () => string;
}

/** Starts it and waits for its URL and device key; kills it when they are not printed within 30 s. */
function startExample(): Promise<RunningExample> {
  const child = spawn(process.execPath, ['--conditions=@agentinfra/source', '--import', 'tsx', 'src/main.ts'], {
    cwd: exampleDir,
    env: { ...process.env, AGENTINFRA_PORT: '0' },
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the example printed no URL and device key within 30 s:\n${output}`));
    }, 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      const deviceKey = /device key of agent helper \(shown once\): (dk_\S+)\n/.exec(output)?.[1];
      if (!url || !deviceKey) return;
      clearTimeout(timer);
      resolve({ child, url, deviceKey, output: () => output });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the example exited with ${code}:\n${output}`));
    });
  });
}

// Regression: the HTTP API could not be called (the bridge key was random and no device key was printed), and
// unknown paths answered a plain-text 404 because `app.route` does not carry the kernel's not-found handler.
describe('examples/embed-library over a real port', () => {
  let example: RunningExample;
  beforeAll(async () => {
    example = await startExample();
  }, 60_000);
  afterAll(async () => {
    if (!example || example.child.exitCode !== null) return;
    const exited = new Promise((resolve) => example.child.once('exit', resolve));
    example.child.kill('SIGINT');
    await exited;
  });

  it('answers the mounted API with the device key it printed', async () => {
    const response = await fetch(`${example.url}/functions/v1/agent-memory/mem/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${example.deviceKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: 'helper', q: 'where does the user live?', k: 1, scope: ['self'] }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { hits: Array<{ text: string }> }).hits[0]?.text).toBe('The user lives in Lisbon.');
  });

  it.each([
    ['GET', '/nope'],
    ['POST', '/functions/v1/agent-artifacts/register'],
  ])('%s %s (no such route, or a module not loaded): the CONTRACT.md JSON 404', async (method, path) => {
    const response = await fetch(`${example.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${example.deviceKey}`, 'content-type': 'application/json' },
      body: method === 'POST' ? '{}' : undefined,
    });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-request-id')).toMatch(/.+/);
    expect(await response.json()).toEqual({ error: { code: 'not_found', message: `No route ${method} ${path}.` } });
  });

  it('prints the device key once and nothing that looks like another credential', async () => {
    await fetch(`${example.url}/functions/v1/agent-memory/mem/query`, { method: 'POST', headers: { authorization: 'Bearer dk_wrong' } });
    expect(example.output().split(example.deviceKey)).toHaveLength(2);
    expect(example.output().match(/\b(bk|dk|dt|g)_[A-Za-z0-9_-]{20,}/g)).toEqual([example.deviceKey]);
  });
});
