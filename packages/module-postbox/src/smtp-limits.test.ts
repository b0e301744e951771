import { createRedisAdapters, type RedisAdapters } from '@agentinfra/adapter-redis';
import { createMemoryRateLimiter } from '@agentinfra/core';
import { postgresAvailability, redisAvailability, sqlDatabases, testRedisUrl } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RECIPIENTS, MAX_REFUSED_RECIPIENTS, MAX_SESSIONS_PER_ADDRESS } from './smtp/session-limits.js';
import { startPostboxReplicas } from './test-support/postbox-replicas.js';
import { MAIL_DOMAIN, type PostboxTestServer, startPostboxTestServer } from './test-support/postbox-test-server.js';
import { createSelfSignedCertificate, type SelfSignedCertificate } from './test-support/self-signed-certificate.js';
import { smtpClient } from './test-support/smtp-client.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

// One server for the per-client limits and the DATA deadline: no test here sends DATA but the deadline's, and none
// leaves a session idle for the 5 s idle timeout.
describe('SMTP per-client limits and DATA deadline', () => {
  const t = usePostboxServer(sqlDatabases()[0]!.create, {
    postboxConfig: { smtp: { port: 'auto', socketTimeoutMs: 5_000, dataTimeoutMs: 1_000 } },
  });

  it(`takes at most ${MAX_RECIPIENTS} recipients per message and answers 452 past that`, async () => {
    // Seeded in one insert (as bob's, over his quota of addresses): allocating them over HTTP is not the point here.
    const addresses = Array.from({ length: MAX_RECIPIENTS + 1 }, (_, i) => `list${i}@${MAIL_DOMAIN}`);
    await t.server.kernel.sql
      .knex('postbox_addresses')
      .insert(addresses.map((address) => ({ address, agent_id: 'bob', created_at: Date.now() })));
    const client = await smtpClient(t.smtpPort);
    expect(await client.command('EHLO test.example')).toMatch(/^250/m);
    expect(await client.command('MAIL FROM:<sender@ext.example>')).toMatch(/^250/);
    const codes: string[] = [];
    for (const address of addresses) codes.push((await client.command(`RCPT TO:<${address}>`)).slice(0, 3));
    expect(codes.slice(0, MAX_RECIPIENTS).every((code) => code === '250')).toBe(true);
    expect(codes.at(-1)).toBe('452');
    client.end();
  });

  it(`closes a session with 421 after ${MAX_REFUSED_RECIPIENTS} unknown recipients`, async () => {
    const client = await smtpClient(t.smtpPort);
    await client.command('EHLO test.example');
    await client.command('MAIL FROM:<sender@ext.example>');
    const codes: string[] = [];
    for (let i = 0; i < MAX_REFUSED_RECIPIENTS; i += 1)
      codes.push((await client.command(`RCPT TO:<nobody${i}@${MAIL_DOMAIN}>`)).slice(0, 3));
    expect(codes.slice(0, -1).every((code) => code === '550')).toBe(true);
    expect(codes.at(-1)).toBe('421');
    await expect.poll(() => client.closed()).toBe(true);
    const next = await smtpClient(t.smtpPort);
    expect(await next.command('EHLO test.example')).toMatch(/^250/m);
    next.end();
  });

  it(`answers 421 to a client address with ${MAX_SESSIONS_PER_ADDRESS} sessions open already`, async () => {
    const open = await Promise.all(Array.from({ length: MAX_SESSIONS_PER_ADDRESS }, () => smtpClient(t.smtpPort)));
    expect(open.every((client) => client.greeting.startsWith('220'))).toBe(true);
    const refused = await smtpClient(t.smtpPort);
    expect(refused.greeting).toMatch(/^421 /);
    for (const client of open) client.end();
    await expect
      .poll(async () => {
        const again = await smtpClient(t.smtpPort);
        again.end();
        return again.greeting.slice(0, 3);
      })
      .toBe('220');
  });

  it('answers 421 and closes a DATA transfer that trickles past dataTimeoutMs, storing nothing', async () => {
    const allocated = await t.postbox('alloc', { agent_id: 'alice', local_part: 'slow' }, 'alice');
    const client = await smtpClient(t.smtpPort);
    await client.command('EHLO test.example');
    await client.command('MAIL FROM:<sender@ext.example>');
    expect(await client.command(`RCPT TO:<${allocated.body.address as string}>`)).toMatch(/^250/);
    expect(await client.command('DATA')).toMatch(/^354/);
    const started = Date.now();
    // Well under the 5 s idle timeout each time: only the DATA deadline can end this.
    const trickle = setInterval(() => client.send('Subject: slow\r\nX: y\r\n'), 200);
    const answer = await client.reply();
    clearInterval(trickle);
    expect(answer).toMatch(/^421 4\.4\.2 /);
    expect(Date.now() - started).toBeLessThan(4_000);
    await expect.poll(() => client.closed()).toBe(true);
    const listed = await t.postbox('list', { agent_id: 'alice' }, 'alice');
    expect(listed.body.messages).toEqual([]);
    const next = await smtpClient(t.smtpPort);
    expect(await next.command('EHLO test.example')).toMatch(/^250/m);
    next.end();
  });
});

/** One session from 127.0.0.1: EHLO, MAIL FROM, then `RCPT TO` each address; the three-digit answers (`''` once closed). */
async function rcptAnswers(port: number, addresses: readonly string[]): Promise<{ codes: string[]; replies: string[]; closed: boolean }> {
  const client = await smtpClient(port);
  await client.command('EHLO guesser.example');
  await client.command('MAIL FROM:<sender@guesser.example>');
  const replies: string[] = [];
  for (const address of addresses) replies.push(await client.command(`RCPT TO:<${address}>`));
  // After a 421 the server closes the connection, which on a loaded host can take longer than 20 ms: wait for it (2 s at most).
  const deadline = Date.now() + 2_000;
  do await new Promise((resolve) => setTimeout(resolve, 20));
  while (replies.at(-1)?.startsWith('421') && !client.closed() && Date.now() < deadline);
  const closed = client.closed();
  client.end();
  return { codes: replies.map((reply) => reply.slice(0, 3)), replies, closed };
}

const guesses = (from: number, count: number) => Array.from({ length: count }, (_, i) => `guess${from + i}@${MAIL_DOMAIN}`);

describe('SMTP refused recipients across sessions', () => {
  const LIMIT = 30;
  const WINDOW_MS = 600_000;
  let now = Date.parse('2026-11-23T10:00:00.000Z');
  const clock = { now: () => now };
  const t = usePostboxServer(sqlDatabases()[0]!.create, () => ({
    rateLimiter: createMemoryRateLimiter({ clock }),
    postboxConfig: { smtp: { port: 'auto', maxRefusedRecipients: LIMIT, refusedRecipientsWindowMs: WINDOW_MS } },
  }));

  it('answers every RCPT TO with 421 once one client had its refusals in the window, a real address included, until the window passes', async () => {
    const alice = `alice@${MAIL_DOMAIN}`;
    // A sender that guesses 10 addresses per session, under the per-session limit of 20, interleaved with a real one.
    const first = await rcptAnswers(t.smtpPort, [alice, ...guesses(0, 10), alice]);
    expect(first.codes).toEqual(['250', ...Array(10).fill('550'), '250']);
    const second = await rcptAnswers(t.smtpPort, guesses(10, 10));
    expect(second.codes).toEqual(Array(10).fill('550'));
    // The third session uses up the 30: its 10th guess is still answered, and the client is told nothing more.
    const third = await rcptAnswers(t.smtpPort, [...guesses(20, 10), alice]);
    expect(third.codes).toEqual([...Array(10).fill('550'), '421']);
    expect(third.replies.at(-1)).toMatch(/^421 4\.7\.0 Too many unknown recipients from your address, try again later\r\n$/);
    expect(third.closed).toBe(true);
    // A new session: the real address and a guess get the same temporary answer.
    for (const address of [alice, `guess99@${MAIL_DOMAIN}`]) {
      const later = await rcptAnswers(t.smtpPort, [address]);
      expect(later.codes).toEqual(['421']);
      expect(later.closed).toBe(true);
    }
    // Nine minutes on, the refusals are still within the ten-minute window.
    now += 540_000;
    expect((await rcptAnswers(t.smtpPort, [alice])).codes).toEqual(['421']);
    // Past the window the client is answered again, and what it guesses counts afresh.
    now += 60_001;
    const again = await rcptAnswers(t.smtpPort, [alice, `guess100@${MAIL_DOMAIN}`, `bob@${MAIL_DOMAIN}`]);
    expect(again.codes).toEqual(['250', '550', '250']);
  });
});

describe.runIf(postgresAvailability().available && redisAvailability().available)(
  'SMTP refused recipients across two replicas (PostgreSQL + Redis)',
  () => {
    const LIMIT = 12;
    let replicas: [PostboxTestServer, PostboxTestServer];
    let stop: () => Promise<void>;

    beforeAll(async () => {
      ({ replicas, stop } = await startPostboxReplicas({ smtp: { port: 'auto', maxRefusedRecipients: LIMIT } }));
    });
    afterAll(async () => {
      await stop?.();
    });

    it('counts the refusals of either replica against one limit', async () => {
      const [one, two] = replicas;
      expect((await rcptAnswers(one.smtpPort, guesses(0, 6))).codes).toEqual(Array(6).fill('550'));
      expect((await rcptAnswers(two.smtpPort, guesses(6, 6))).codes).toEqual(Array(6).fill('550'));
      expect((await rcptAnswers(one.smtpPort, [`alice@${MAIL_DOMAIN}`])).codes).toEqual(['421']);
      expect((await rcptAnswers(two.smtpPort, [`bob@${MAIL_DOMAIN}`])).codes).toEqual(['421']);
    });
  },
);

describe.runIf(redisAvailability().available)('SMTP refused recipients while Redis fails', () => {
  const LIMIT = 25;
  let redis: RedisAdapters;

  beforeAll(async () => {
    redis = await createRedisAdapters({ url: testRedisUrl(), keyPrefix: `refused-${Date.now()}:` });
  });
  const t = usePostboxServer(sqlDatabases()[0]!.create, () => ({
    rateLimiter: redis.rateLimiter,
    postboxConfig: { smtp: { port: 'auto', maxRefusedRecipients: LIMIT } },
  }));
  beforeAll(async () => {
    // The rate limiter's connection goes away: each of its calls fails from now on.
    await redis.close();
  });

  it('counts refusals in the process meanwhile: guessing stops at the limit, and mail to real addresses is still accepted until then', async () => {
    const first = await rcptAnswers(t.smtpPort, [`alice@${MAIL_DOMAIN}`, ...guesses(0, 15)]);
    expect(first.codes).toEqual(['250', ...Array(15).fill('550')]);
    const second = await rcptAnswers(t.smtpPort, [...guesses(15, 10), `bob@${MAIL_DOMAIN}`]);
    expect(second.codes).toEqual([...Array(10).fill('550'), '421']);
    expect((await rcptAnswers(t.smtpPort, [`alice@${MAIL_DOMAIN}`])).codes).toEqual(['421']);
  });
});

describe('SMTP under stress', () => {
  const MAX_CLIENTS = 8;
  let t: PostboxTestServer;
  let cleanup: () => Promise<void>;
  let certificate: SelfSignedCertificate;

  beforeAll(async () => {
    certificate = await createSelfSignedCertificate();
    const fixture = await sqlDatabases()[0]!.create();
    cleanup = fixture.cleanup;
    t = await startPostboxTestServer({
      db: fixture.db,
      postboxConfig: {
        smtp: {
          port: 'auto',
          maxClients: MAX_CLIENTS,
          socketTimeoutMs: 60_000,
          stressSocketTimeoutMs: 1_000,
          tlsCertFile: certificate.certFile,
          tlsKeyFile: certificate.keyFile,
        },
      },
    });
  });
  afterAll(async () => {
    await t?.stop();
    await cleanup?.();
    await certificate?.remove();
  });

  const clients = (count: number) =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const client = await smtpClient(t.smtpPort);
        expect(await client.command('EHLO client.example')).toMatch(/^250/m);
        return client;
      }),
    );
  /** Sends NOOP on each client every 300 ms (never idle for the 1 s stress timeout); returns the stop. */
  const keepBusy = (busy: Array<Awaited<ReturnType<typeof smtpClient>>>) => {
    const timer = setInterval(() => {
      for (const client of busy) void client.command('NOOP');
    }, 300);
    return () => clearInterval(timer);
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('gives idle clients the stress idle timeout once 3/4 of the slots are taken, and the usual one when they are free again', async () => {
    // Three of eight: no stress, the 60 s idle timeout holds.
    const busy = await clients(3);
    await pause(2_500);
    expect(busy.map((client) => client.closed())).toEqual([false, false, false]);
    // Six of eight, three of them busy: the three idle ones are closed after the 1 s stress timeout;
    // three left is fewer than half, so the listener leaves stress only once all three are gone.
    const stopBusy = keepBusy(busy);
    const idle = await clients(3);
    const answers = await Promise.all(idle.map((client) => client.reply()));
    for (const answer of answers) expect(answer).toMatch(/^421 .*Timeout/);
    await expect.poll(() => idle.every((client) => client.closed())).toBe(true);
    // Free again: the connections already open have the 60 s idle timeout back.
    stopBusy();
    await pause(2_500);
    expect(busy.map((client) => client.closed())).toEqual([false, false, false]);
    for (const client of busy) client.end();
  });

  it('gives a connection whose STARTTLS handshake finishes under stress the stress idle timeout', async () => {
    const [tls] = await clients(1);
    expect(await tls!.command('STARTTLS')).toMatch(/^220 /);
    // The handshake starts before stress and finishes after: smtp-server armed the TLS socket's timeout then.
    const busy = await clients(5);
    const stopBusy = keepBusy(busy);
    try {
      await tls!.secure(certificate.ca);
      expect(await tls!.command('EHLO tls.example')).toMatch(/^250/m);
      expect(await tls!.reply()).toMatch(/^421 .*Timeout/);
    } finally {
      stopBusy();
      for (const client of [tls!, ...busy]) client.end();
    }
  });
});
