import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentInfraClient, verifyWebhook } from './index.js';
import { seedAgent } from './test-support/agent.js';
import { startServer, type TestServer } from './test-support/serve.js';

/** One delivery as received: headers and the exact body. */
interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on a free port that records every delivery and answers 200. */
async function startReceiver() {
  const deliveries: Delivery[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      deliveries.push({ path: request.url ?? '', headers: request.headers, body });
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function delivered(deliveries: Delivery[], path: string, count: number): Promise<Delivery[]> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const matching = deliveries.filter((delivery) => delivery.path === path);
    if (matching.length >= count) return matching;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no delivery to ${path}`);
}

describe('verifyWebhook on real deliveries', () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let bridge: AgentInfraClient;
  let alice: AgentInfraClient;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startServer({ AGENTINFRA_ALLOW_PRIVATE_CALLBACKS: 'true', AGENTINFRA_SCHEDULER_MIN_INTERVAL_MS: '1000' });
    ({ bridge, agent: alice } = await seedAgent(server.url, 'alice'));
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  it('accepts a scheduler callback and rejects it tampered, stale or with another secret', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    await alice.scheduler.job.put({
      agent_id: 'alice',
      name: 'tick',
      cadence: '@every 1s',
      callback_url: `${receiver.url}/tick`,
      secret,
      max_attempts: 1,
    });
    const [delivery] = (await delivered(receiver.deliveries, '/tick', 1)) as [Delivery];
    await alice.scheduler.job.delete({ agent_id: 'alice', name: 'tick' });
    const payload = await verifyWebhook({ secret, headers: delivery.headers, body: delivery.body });
    expect(payload).toBeTypeOf('object');
    const headers = new Headers(delivery.headers as Record<string, string>);
    expect(await verifyWebhook({ secret, headers, body: new TextEncoder().encode(delivery.body) })).toEqual(payload);
    const failing = [
      { secret, headers: delivery.headers, body: `${delivery.body} ` },
      { secret: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', headers: delivery.headers, body: delivery.body },
      { secret, headers: delivery.headers, body: delivery.body, now: Date.now() + 600_000 },
      { secret, headers: { ...delivery.headers, 'webhook-signature': undefined }, body: delivery.body },
    ];
    for (const input of failing)
      await expect(verifyWebhook(input)).rejects.toMatchObject({ status: 0, code: 'webhook_verification_failed' });
  });

  it('accepts a postbox delivery signed during a secret rotation with either secret', async () => {
    const { address } = await alice.postbox.alloc({ agent_id: 'alice', local_part: 'hooks' });
    const registered = await alice.postbox.webhook.register({
      agent_id: 'alice',
      url: `${receiver.url}/mail`,
      events: ['message.received'],
    });
    const previous = registered.secret as string;
    const rotated = await alice.postbox.webhook.rotate({ agent_id: 'alice', webhook_id: registered.webhook_id });
    await bridge.postbox.ingest({
      to: address,
      from: 'friend@example.com',
      subject: 'Lunch?',
      body: 'Noon on Friday?',
      headers: { 'message-id': '<lunch@example.com>' },
    });
    const [delivery] = (await delivered(receiver.deliveries, '/mail', 1)) as [Delivery];
    for (const secret of [rotated.secret, previous, [rotated.secret, previous]])
      expect(JSON.stringify(await verifyWebhook({ secret, headers: delivery.headers, body: delivery.body }))).toContain('message.received');
  });
});
