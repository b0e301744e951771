import { describe, expect, it } from 'vitest';
import { hostnameSchema, normalizeHostname } from './hostname.js';

describe('normalizeHostname (issue #8)', () => {
  it.each([
    ['app.example.com', 'app.example.com'],
    ['App.Example.COM', 'app.example.com'],
    ['Bücher.example', 'xn--bcher-kva.example'],
    ['日本語.jp', 'xn--wgv71a119e.jp'],
    ['ＥＸＡＭＰＬＥ.com', 'example.com'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['a-b.c0.example', 'a-b.c0.example'],
    [`${'a'.repeat(63)}.example.com`, `${'a'.repeat(63)}.example.com`],
  ])('accepts %s as %s', (input, host) => {
    expect(normalizeHostname(input)).toEqual({ ok: true, host });
  });

  it.each([
    ['has space.example.com', 'whitespace'],
    [' app.example.com', 'whitespace'],
    [`${'a'.repeat(64)}.example.com`, 'longer than 63'],
    ['*.example.com', 'wildcard'],
    ['*', 'wildcard'],
    ['1.2.3.4', 'IP addresses'],
    ['0x7f.1', 'all digits'],
    ['0x7f.0x1', 'IP addresses'],
    ['::1', 'IP addresses'],
    ['[::1]', 'IP addresses'],
    ['example.com.', 'dot'],
    ['localhost', 'two labels'],
    ['exa_mple.com', 'letters, digits'],
    ['-app.example.com', 'letters, digits'],
    ['app-.example.com', 'letters, digits'],
    ['ab--cd.example.com', 'positions 3 and 4'],
    ['a..b.com', 'empty label'],
    ['example.123', 'all digits'],
    ['xn--zz.com', 'internationalised'],
    ['', 'empty'],
  ])('refuses %j (%s)', (input, reason) => {
    const checked = normalizeHostname(input);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toContain(reason);
  });

  it('refuses names over 253 octets and accepts 253', () => {
    const label = 'a'.repeat(63);
    const exact = `${label}.${label}.${label}.${'b'.repeat(61)}`;
    expect(exact.length).toBe(253);
    expect(normalizeHostname(exact).ok).toBe(true);
    expect(normalizeHostname(`${exact}c`).ok).toBe(false);
  });

  it('gives zod a field issue and the ASCII form', () => {
    expect(hostnameSchema.parse('Bücher.example')).toBe('xn--bcher-kva.example');
    const failed = hostnameSchema.safeParse('*.example.com');
    expect(failed.success).toBe(false);
    expect(failed.error?.issues[0]?.message).toMatch(/^hostname wildcards/);
  });
});
