import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromiumAvailability, launchChromium } from '@agentinfra/test-services/chromium';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAgent } from './test-support/agent.js';
import { startServer, type TestServer } from './test-support/serve.js';

type Browser = Awaited<ReturnType<typeof launchChromium>>;

/** What the page's module script puts on `globalThis`: the bundle's exports. */
interface PageGlobals {
  agentinfra: typeof import('./index.js');
}

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/**
 * The client bundled as a browser would get it. With `platform: 'browser'`
 * and nothing marked external, any import of a Node built-in fails to
 * resolve, so the build itself is the check that none is reachable.
 */
async function browserBundle(): Promise<{ code: string; inputs: string[] }> {
  const result = await build({
    absWorkingDir: packageDir,
    entryPoints: ['src/index.ts'],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { code: result.outputFiles[0]?.text ?? '', inputs: Object.keys(result.metafile.inputs) };
}

/** A server on a free port of 127.0.0.1 (another origin than the API) with a page that loads the bundle as a module. */
async function startPageServer(bundle: string): Promise<{ url: string; server: Server }> {
  const html =
    '<!doctype html><html><head><meta charset="utf-8"><title>client</title><link rel="icon" href="data:,"></head><body>' +
    '<script type="module">import * as agentinfra from "./client.js"; globalThis.agentinfra = agentinfra;</script></body></html>';
  const server = createServer((request, response) => {
    if (request.url === '/') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    else if (request.url === '/client.js') response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Headers of a Standard Webhooks delivery of `body`, signed with the `whsec_` secret `secret`. */
function signedHeaders(secret: string, body: string): Record<string, string> {
  const id = `msg_${randomBytes(8).toString('hex')}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

describe.runIf(chromiumAvailability().available)('the client bundled for browsers, in headless Chromium, against a real server', () => {
  let server: TestServer;
  let pages: { url: string; server: Server };
  let browser: Browser;
  let key: string;
  let inputs: string[];

  beforeAll(async () => {
    const bundle = await browserBundle();
    inputs = bundle.inputs;
    [server, pages, browser] = await Promise.all([startServer(), startPageServer(bundle.code), launchChromium()]);
    ({ key } = await seedAgent(server.url, 'alice'));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => (pages ? pages.server.close(resolve) : resolve(undefined)));
    await server?.stop();
  });

  it('bundles only the client sources (no Node built-in resolves for the browser platform)', () => {
    expect(inputs.length).toBeGreaterThan(0);
    for (const input of inputs) expect(input).toMatch(/^src\/[\w/-]+\.ts$/);
  });

  it('calls the API cross-origin (CORS), throws typed errors and verifies a webhook, logging no error', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    const failed: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    await page.goto(`${pages.url}/`, { waitUntil: 'load' });
    await page.waitForFunction(() => 'agentinfra' in globalThis);
    expect(new URL(pages.url).origin).not.toBe(new URL(server.url).origin);

    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const body = JSON.stringify({ type: 'postbox.message', data: { agent_id: 'alice' } });
    const headers = signedHeaders(secret, body);

    const result = await page.evaluate(
      async ({ url, key, secret, body, headers }) => {
        const { agentinfra } = globalThis as unknown as PageGlobals;
        const client = agentinfra.createClient({ url, key });
        const written = await client.memory.write({
          agent_id: 'alice',
          kind: 'semantic',
          text: 'Deploys to production happen on Tuesdays after the standup.',
          provenance: 'browser-test',
          scope: ['self'],
        });
        await client.memory.write({
          agent_id: 'alice',
          kind: 'semantic',
          text: 'The user likes dark mode.',
          provenance: 'browser-test',
          scope: ['self'],
        });
        const found = await client.memory.query({ agent_id: 'alice', q: 'which day do we deploy?', k: 1, scope: ['self'] });
        const missing = await client.scheduler.runs.list({ agent_id: 'alice', name: 'no-such-job' }).catch((error: unknown) => error);
        const unauthorized = await agentinfra
          .createClient({ url, key: 'dk_not_a_real_key', retries: 0 })
          .memory.query({ agent_id: 'alice', q: 'anything', k: 1, scope: ['self'] })
          .catch((error: unknown) => error);
        const upload = await client.artifacts
          .upload({ agent_id: 'alice', key: 'notes.txt', mime: 'text/plain', data: new TextEncoder().encode('hi') })
          .catch((error: unknown) => error);
        const payload = await agentinfra.verifyWebhook({ secret, headers: new Headers(headers), body });
        const tampered = await agentinfra.verifyWebhook({ secret, headers, body: `${body} ` }).catch((error: unknown) => error);
        const described = [missing, unauthorized, upload, tampered].map((error) =>
          error instanceof agentinfra.AgentInfraError
            ? { typed: true, name: error.name, status: error.status, code: error.code, requestId: error.requestId ?? null }
            : { typed: false, text: String(error) },
        );
        return { writtenId: written.id, hitIds: found.hits.map((hit) => hit.id), errors: described, payload };
      },
      { url: server.url, key, secret, body, headers },
    );

    expect(result.hitIds).toEqual([result.writtenId]);
    const [missing, unauthorized, upload, tampered] = result.errors;
    expect(missing).toMatchObject({ typed: true, name: 'AgentInfraError', status: 404, code: 'not_found' });
    expect(unauthorized).toMatchObject({ typed: true, name: 'AgentInfraError', status: 401, code: 'unauthenticated' });
    for (const error of [missing, unauthorized]) expect(error).toHaveProperty('requestId', expect.stringMatching(/\S/));
    expect(upload).toMatchObject({ typed: true, status: 0, code: 'invalid_request', requestId: null });
    expect(tampered).toMatchObject({ typed: true, status: 0, code: 'webhook_verification_failed' });
    expect(result.payload).toEqual(JSON.parse(body));
    // Chromium logs every 4xx response as a console error: exactly the two provoked above, nothing else.
    expect(failed.sort()).toEqual([
      `401 ${server.url}/functions/v1/agent-memory/mem/query`,
      `404 ${server.url}/functions/v1/agent-scheduler/runs/list`,
    ]);
    expect(problems.sort()).toEqual([
      'console: Failed to load resource: the server responded with a status of 401 (Unauthorized)',
      'console: Failed to load resource: the server responded with a status of 404 (Not Found)',
    ]);
    await context.close();
  });
});
