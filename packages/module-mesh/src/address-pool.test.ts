import { describe, expect, it } from 'vitest';
import { addressPoolProblem, createAddressPool } from './address-pool.js';

describe('address pools', () => {
  it('hands out 100.64.0.0/10 from 100.64.0.1 and skips network and broadcast', () => {
    const pool = createAddressPool('100.64.0.0/10');
    expect(pool.family).toBe('ipv4');
    expect(pool.addressAt(1)).toBe('100.64.0.1');
    expect(pool.addressAt(256)).toBe('100.64.1.0');
    expect(pool.lastOffset).toBe(2 ** 22 - 2);
    expect(pool.addressAt(pool.lastOffset)).toBe('100.127.255.254');
    expect(() => pool.addressAt(0)).toThrow(RangeError);
    expect(() => pool.addressAt(pool.lastOffset + 1)).toThrow(RangeError);
    expect(pool.hostRoute('100.64.0.1')).toBe('100.64.0.1/32');
  });

  it('handles IPv6 prefixes in RFC 5952 form with /128 host routes', () => {
    const pool = createAddressPool('fd7a:115c:a1e0::/48');
    expect(pool.family).toBe('ipv6');
    expect(pool.addressAt(1)).toBe('fd7a:115c:a1e0::1');
    expect(pool.addressAt(65_536)).toBe('fd7a:115c:a1e0::1:0');
    expect(pool.lastOffset).toBe(Number.MAX_SAFE_INTEGER);
    expect(pool.hostRoute('fd7a:115c:a1e0::1')).toBe('fd7a:115c:a1e0::1/128');
    expect(createAddressPool('fd00::/126').lastOffset).toBe(3);
  });

  it.each([
    ['100.64.0.0', 'CIDR'],
    ['100.64.0.1/10', 'network address: 100.64.0.0/10'],
    ['10.0.0.0/31', 'at least 2 host bits'],
    ['fd00::/127', 'at least 2 host bits'],
    ['10.0.0.0/33', 'CIDR'],
    ['not-a-prefix', 'CIDR'],
    // Legacy IPv4 notations, which ipaddr.js (like inet_aton) reads as octal, hex or one number.
    ['010.000.000.000/8', 'plain dotted decimal'],
    ['0144.0.0.0/10', 'plain dotted decimal'],
    ['0x64.0x40.0.0/10', 'plain dotted decimal'],
    ['1681915904/10', 'plain dotted decimal'],
    ['100.64.0/10', 'plain dotted decimal'],
    ['100.064.0.0/10', 'plain dotted decimal'],
    ['::ffff:010.0.0.0/104', 'CIDR'],
    ['100.64.0.0/010', 'CIDR'],
    ['fe80::%eth0/64', 'zone id'],
  ])('refuses %s', (prefix, problem) => {
    expect(addressPoolProblem(prefix)).toContain(problem);
    expect(() => createAddressPool(prefix)).toThrow(problem);
  });

  it.each(['100.64.0.0/10', '10.0.0.0/8', '0.0.0.0/0', 'fd7a:115c:a1e0::/48', 'FD7A:115C:A1E0::/48'])('accepts %s', (prefix) => {
    expect(addressPoolProblem(prefix)).toBeNull();
  });
});
