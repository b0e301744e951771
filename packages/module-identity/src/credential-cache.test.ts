import type { Principal } from '@agentinfra/core';
import { describe, expect, it } from 'vitest';
import { createCredentialCache } from './credential-cache.js';

const device = (deviceId: string): Principal => ({ kind: 'device', agentId: 'alice', deviceId });
const delegation = (delegationId: string): Principal => ({
  kind: 'delegation',
  agentId: 'alice',
  delegationId,
  toAgent: 'bob',
  permissions: ['memory.read'],
});

describe('createCredentialCache', () => {
  it('answers for ttlMs after the database read, and never at or past the credential’s expiry', () => {
    const cache = createCredentialCache({ ttlMs: 5_000, maxEntries: 10 });
    cache.put('h1', device('dev_1'), { now: 1_000, expiresAt: 1_000_000, revision: cache.revision() });
    expect(cache.get('h1', 5_999)).toEqual(device('dev_1'));
    expect(cache.get('h1', 6_000)).toBeUndefined();
    cache.put('h2', device('dev_2'), { now: 1_000, expiresAt: 2_500, revision: cache.revision() });
    expect(cache.get('h2', 2_499)).toEqual(device('dev_2'));
    expect(cache.get('h2', 2_500)).toBeUndefined();
    cache.put('h3', device('dev_3'), { now: 1_000, expiresAt: 1_000, revision: cache.revision() });
    expect(cache.get('h3', 1_000)).toBeUndefined();
  });

  it('forgets revoked credentials at once, and refuses a read that started before the revocation', () => {
    const cache = createCredentialCache({ ttlMs: 5_000, maxEntries: 10 });
    const at = { now: 0, expiresAt: 1_000_000 };
    cache.put('d1', device('dev_1'), { ...at, revision: cache.revision() });
    cache.put('d2', device('dev_2'), { ...at, revision: cache.revision() });
    cache.put('t1', delegation('dlg_1'), { ...at, revision: cache.revision() });
    const before = cache.revision();
    cache.forget((principal) => principal.kind === 'device' && principal.deviceId === 'dev_1');
    expect(cache.get('d1', 1)).toBeUndefined();
    expect(cache.get('d2', 1)).toEqual(device('dev_2'));
    cache.put('d1', device('dev_1'), { ...at, revision: before });
    expect(cache.get('d1', 1)).toBeUndefined();
    cache.forget((principal) => principal.kind === 'delegation' && principal.delegationId === 'dlg_1');
    expect(cache.get('t1', 1)).toBeUndefined();
  });

  it('keeps at most maxEntries, dropping the oldest, and keeps nothing with ttlMs 0', () => {
    const cache = createCredentialCache({ ttlMs: 5_000, maxEntries: 2 });
    const at = { now: 0, expiresAt: 1_000_000, revision: 0 };
    cache.put('a', device('dev_a'), at);
    cache.put('b', device('dev_b'), at);
    cache.put('c', device('dev_c'), at);
    expect([cache.get('a', 1), cache.get('b', 1), cache.get('c', 1)]).toEqual([undefined, device('dev_b'), device('dev_c')]);
    const off = createCredentialCache({ ttlMs: 0, maxEntries: 2 });
    off.put('a', device('dev_a'), at);
    expect(off.get('a', 0)).toBeUndefined();
  });

  it('hands out frozen principals, so no caller can change what the next request sees', () => {
    const cache = createCredentialCache({ ttlMs: 5_000, maxEntries: 2 });
    cache.put('a', delegation('dlg_a'), { now: 0, expiresAt: 1_000_000, revision: 0 });
    const cached = cache.get('a', 1);
    expect(Object.isFrozen(cached)).toBe(true);
    expect(cached?.kind === 'delegation' && Object.isFrozen(cached.permissions)).toBe(true);
  });
});
