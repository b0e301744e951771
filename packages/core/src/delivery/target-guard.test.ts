import { describe, expect, it } from 'vitest';
import { InputError } from '../errors.js';
import { boundedResolver, type HostResolver, resolveTarget, TargetLookupFailure } from './target-guard.js';

describe('boundedResolver', () => {
  it('runs at most `concurrency` lookups at once and times each caller out, never starting a lookup whose caller gave up', async () => {
    let inFlight = 0;
    let most = 0;
    const started: string[] = [];
    const hang: HostResolver = (hostname) => {
      started.push(hostname);
      inFlight += 1;
      most = Math.max(most, inFlight);
      return new Promise((resolve) =>
        setTimeout(() => {
          inFlight -= 1;
          resolve([{ address: '192.0.2.1', family: 4 }]);
        }, 300),
      );
    };
    const resolve = boundedResolver(hang, { concurrency: 2, timeoutMs: 100 });
    const began = Date.now();
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => resolve(`slow-${i}.test`)));
    expect(Date.now() - began).toBeLessThan(1_000);
    expect(outcomes.every((outcome) => outcome.status === 'rejected' && (outcome.reason as { code?: string }).code === 'ETIMEOUT')).toBe(
      true,
    );
    await new Promise((done) => setTimeout(done, 700));
    expect(most).toBe(2);
    expect(started).toEqual(['slow-0.test', 'slow-1.test']);
  });

  it('answers with the addresses when the name resolves in time', async () => {
    const fast: HostResolver = async () => [{ address: '2001:db8::1', family: 6 }];
    const resolve = boundedResolver(fast, { concurrency: 1, timeoutMs: 1_000 });
    expect(await Promise.all([resolve('a.test'), resolve('b.test')])).toEqual([
      [{ address: '2001:db8::1', family: 6 }],
      [{ address: '2001:db8::1', family: 6 }],
    ]);
  });

  it('shares one lookup among callers asking for the same name at once', async () => {
    let calls = 0;
    const slow: HostResolver = async () => {
      calls += 1;
      await new Promise((done) => setTimeout(done, 50));
      return [{ address: '192.0.2.7', family: 4 }];
    };
    const resolve = boundedResolver(slow, { concurrency: 1, timeoutMs: 1_000 });
    const answers = await Promise.all(Array.from({ length: 5 }, () => resolve('hooks.example.test')));
    expect(calls).toBe(1);
    expect(answers.every((answer) => answer[0]?.address === '192.0.2.7')).toBe(true);
  });
});

describe('resolveTarget', () => {
  const failing =
    (code: string): HostResolver =>
    async () => {
      throw Object.assign(new Error(code), { code });
    };

  it('refuses a name that does not exist for good, and one that timed out as worth retrying', async () => {
    const gone = await resolveTarget({ hostname: 'gone.example.test', allowPrivate: false, resolver: failing('ENOTFOUND') }).catch(
      (e) => e,
    );
    expect(gone).toBeInstanceOf(InputError);
    expect(gone).not.toBeInstanceOf(TargetLookupFailure);
    for (const code of ['ETIMEOUT', 'EAI_AGAIN']) {
      const later = await resolveTarget({ hostname: 'slow.example.test', allowPrivate: false, resolver: failing(code) }).catch((e) => e);
      expect(later).toBeInstanceOf(TargetLookupFailure);
      expect(later).toBeInstanceOf(InputError);
    }
  });
});
