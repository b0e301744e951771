import { describe, expect, it } from 'vitest';
import { createAesGcmSecretBox, newMasterKey } from './secret-box.js';

describe('AES-256-GCM secret box', () => {
  const key = newMasterKey();

  it('round-trips and never contains the plaintext', () => {
    const box = createAesGcmSecretBox({ masterKey: key });
    const sealed = box.seal({ plaintext: 'hunter2 ✓', context: 'ctx' });
    expect(sealed).toMatch(/^sb1\.[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('hunter2');
    expect(box.open({ sealed, context: 'ctx' })).toBe('hunter2 ✓');
    expect(box.seal({ plaintext: 'same', context: 'ctx' })).not.toBe(box.seal({ plaintext: 'same', context: 'ctx' }));
  });

  it('binds the context and detects tampering', () => {
    const box = createAesGcmSecretBox({ masterKey: key });
    const sealed = box.seal({ plaintext: 'value', context: 'secret:alice:k' });
    expect(() => box.open({ sealed, context: 'secret:bob:k' })).toThrow(/authentication/);
    const last = sealed.at(-1) === 'A' ? 'B' : 'A';
    expect(() => box.open({ sealed: sealed.slice(0, -1) + last, context: 'secret:alice:k' })).toThrow();
    expect(() => box.open({ sealed: 'garbage', context: 'x' })).toThrow(/format/);
  });

  it('rotates: old seals open with the previous key, new seals use the new key', () => {
    const oldBox = createAesGcmSecretBox({ masterKey: key });
    const sealed = oldBox.seal({ plaintext: 'v', context: 'c' });
    const next = newMasterKey();
    const rotated = createAesGcmSecretBox({ masterKey: next, previousMasterKeys: [key] });
    expect(rotated.open({ sealed, context: 'c' })).toBe('v');
    expect(rotated.needsReseal(sealed)).toBe(true);
    const resealed = rotated.seal({ plaintext: 'v', context: 'c' });
    expect(rotated.needsReseal(resealed)).toBe(false);
    const withoutOld = createAesGcmSecretBox({ masterKey: next });
    expect(() => withoutOld.open({ sealed, context: 'c' })).toThrow(/not configured/);
  });

  it('rejects keys that are not 32 bytes', () => {
    expect(() => createAesGcmSecretBox({ masterKey: Buffer.alloc(16).toString('base64') })).toThrow();
  });
});
