import { randomBytes } from 'node:crypto';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SchedulerTestServer, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

// The same cases and answers as the postbox's webhook-secret-rule.test.ts: both modules take a caller's signing secret
// by core's webhookSecretSchema (CONTRACT.md "Signed deliveries").
const hex = (chars: number) => randomBytes(chars).toString('hex').slice(0, chars);
const whsec = (bytes: number) => `whsec_${randomBytes(bytes).toString('base64')}`;
const NOT_BASE64 = 'A whsec_ secret must be followed by standard base64 (A-Z a-z 0-9 + /, padded with =).';
const KEY_SIZE = 'A whsec_ secret must decode to 24–64 bytes.';
const RAW_LENGTH = 'A secret without the whsec_ prefix must be 16–512 characters.';
const RAW_ASCII = 'A secret without the whsec_ prefix must be printable ASCII characters only (space to ~).';
const CASES: Array<{ name: string; secret: string; refused?: string }> = [
  { name: 'whsec_ of 23 bytes', secret: whsec(23), refused: KEY_SIZE },
  { name: 'whsec_ of 24 bytes', secret: whsec(24) },
  { name: 'whsec_ of 64 bytes', secret: whsec(64) },
  { name: 'whsec_ of 65 bytes', secret: whsec(65), refused: KEY_SIZE },
  { name: 'whsec_ and then not base64', secret: `whsec_${hex(32)}-_`, refused: NOT_BASE64 },
  { name: '15 raw characters', secret: hex(15), refused: RAW_LENGTH },
  { name: '16 raw characters', secret: hex(16) },
  { name: '512 raw characters', secret: hex(512) },
  { name: '513 raw characters', secret: hex(513), refused: RAW_LENGTH },
  { name: 'a raw secret with a non-ASCII character', secret: `${hex(20)}é`, refused: RAW_ASCII },
  { name: 'a raw secret with a control character', secret: `${hex(20)}\n`, refused: RAW_ASCII },
];
/** Random characters each secret starts with (after `whsec_`): an answer holding them repeats the secret. */
const probeOf = (secret: string) => secret.replace(/^whsec_/, '').slice(0, 15);

describe('scheduler /job/put takes a signing secret by the shared rule', () => {
  let t: SchedulerTestServer;
  let cleanup: () => Promise<void>;

  /** POSTs over HTTP as alice. @returns the status, the answer's text as sent and its parsed body. */
  const post = async (path: string, body: Record<string, unknown>) => {
    const response = await fetch(`${t.server.url}/functions/v1/agent-scheduler/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.keys.alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: 'alice', ...body }),
    });
    const text = await response.text();
    return { status: response.status, text, body: JSON.parse(text) };
  };

  beforeAll(async () => {
    const [sqlite] = sqlDatabases();
    const fixture = await sqlite!.create();
    cleanup = fixture.cleanup;
    t = await startSchedulerTestServer({ db: fixture.db, listen: true, jobs: { enabled: false } });
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it.each(CASES)('$name', async ({ secret, refused }) => {
    const name = `secret-${hex(12)}`;
    const answer = await post('job/put', { name, cadence: '@every 1h', callback_url: 'http://127.0.0.1:9/hook', secret });
    if (refused === undefined) {
      expect(answer.status, answer.text).toBe(200);
      expect((await post('job/delete', { name })).status).toBe(200);
      return;
    }
    expect(answer.text).not.toContain(probeOf(secret));
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('invalid_request');
    expect(answer.body.error.details.fields).toEqual([{ path: 'secret', message: refused }]);
  });

  it('answers a secret that is not a string with the type error only', async () => {
    const answer = await post('job/put', {
      name: 'typed',
      cadence: '@every 1h',
      callback_url: 'http://127.0.0.1:9/hook',
      secret: ['whsec_AAAA'],
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.fields).toEqual([{ path: 'secret', message: 'Invalid input: expected string, received array' }]);
  });
});
