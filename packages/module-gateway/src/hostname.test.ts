import { describe, expect, it } from 'vitest';
import { CLAIM_RECORD_PREFIX, hostnameSchema, MAX_HOSTNAME_OCTETS, normalizeHostname } from './hostname.js';

describe('normalizeHostname (issue #8)', () => {
  it.each([
    ['app.example.com', 'app.example.com'],
    ['App.Example.COM', 'app.example.com'],
    ['Bücher.example', 'xn--bcher-kva.example'],
    ['日本語.jp', 'xn--wgv71a119e.jp'],
    ['\u05d0\u05d1.example.com', 'xn--4dbc.example.com'],
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
    ['1.2.3.4', 'An IP address is not a hostname.'],
    ['0x7f.1', 'The top-level label of the hostname must not be all digits.'],
    ['0x7f.0x1', 'An IP address is not a hostname.'],
    ['::1', 'An IP address is not a hostname.'],
    ['[::1]', 'An IP address is not a hostname.'],
    ['example.com.', 'dot'],
    ['localhost', 'two labels'],
    ['exa_mple.com', 'letters, digits'],
    ['-app.example.com', 'letters, digits'],
    ['app-.example.com', 'letters, digits'],
    ['ab--cd.example.com', 'positions 3 and 4'],
    ['a..b.com', 'empty label'],
    ['example.123', 'The top-level label of the hostname must not be all digits.'],
    ['xn--zz.com', 'internationalised'],
    ['', 'empty'],
    ['victim.example.com/path', 'contains "/"'],
    ['victim.example.com#evil', 'contains "#"'],
    ['victim.example.com?x=1', 'contains "?"'],
    ['victim.example.com\\evil', 'contains "\\"'],
    ['user@victim.example.com', 'contains "@"'],
    ['victim.example.com:8443', 'contains ":"'],
    ['vic%74im.example.com', 'contains "%"'],
    ['vic\u00adtim.example.com', 'U+00AD'],
    ['vic\u200btim.example.com', 'U+200B'],
    ['vic\ufe0ftim.example.com', 'U+FE0F'],
    ['vic\u0000tim.example.com', 'U+0000'],
    // Review: bound after the TXT proof, then refused by the CA (rejectedIdentifier): IDNA2008 was not checked.
    ['a\u05d0.example.com', 'IDNA2008'],
    ['1\u05d0.example.com', 'IDNA2008'],
    ['xn----7sb.example', 'IDNA2008'],
  ])('refuses %j (%s)', (input, reason) => {
    const checked = normalizeHostname(input);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toContain(reason);
  });

  it('caps names so that the claim record fits the 253-octet DNS limit: 231 octets', () => {
    expect(MAX_HOSTNAME_OCTETS).toBe(253 - `${CLAIM_RECORD_PREFIX}.`.length);
    expect(MAX_HOSTNAME_OCTETS).toBe(231);
    const label = 'a'.repeat(63);
    const exact = `${label}.${label}.${label}.${'b'.repeat(39)}`;
    expect(exact.length).toBe(231);
    expect(normalizeHostname(exact)).toEqual({ ok: true, host: exact });
    expect(`${CLAIM_RECORD_PREFIX}.${exact}`.length).toBe(253);
    expect(normalizeHostname(`${exact}c`)).toEqual({
      ok: false,
      reason:
        'The hostname is longer than 231 octets, so its claim record _agentinfra-challenge.<host> would exceed the 253-octet limit of DNS names.',
    });
  });

  it('gives zod a field issue that reads as a sentence, and the ASCII form', () => {
    expect(hostnameSchema.parse('Bücher.example')).toBe('xn--bcher-kva.example');
    const failed = hostnameSchema.safeParse('*.example.com');
    expect(failed.success).toBe(false);
    expect(failed.error?.issues[0]?.message).toBe('The hostname contains a wildcard (*); wildcards are not allowed.');
    expect(hostnameSchema.safeParse('1.2.3.4').error?.issues[0]?.message).toBe('An IP address is not a hostname.');
  });
});
