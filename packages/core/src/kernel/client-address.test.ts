import { describe, expect, it } from 'vitest';
import { addressGroup } from './client-address.js';

describe('addressGroup', () => {
  it('counts an IPv4 client by its address, however it is written', () => {
    expect(addressGroup('203.0.113.9')).toBe('203.0.113.9');
    expect(addressGroup('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressGroup('::FFFF:cb00:7109')).toBe('203.0.113.9');
  });

  it('counts an IPv6 client by its /64 network, so that picking new addresses in it gains nothing', () => {
    expect(addressGroup('2001:db8:1:2:aaaa:bbbb:cccc:1')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:DB8:1:2::5')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8:1:3::5')).toBe('2001:db8:1:3::/64');
    expect(addressGroup('2001:db8::')).toBe('2001:db8::/64');
    expect(addressGroup('fe80::1%eth0')).toBe('fe80::/64');
    expect(addressGroup('::1')).toBe('::/64');
  });

  it('keeps what is not an address as it is', () => {
    expect(addressGroup('unknown')).toBe('unknown');
    expect(addressGroup('')).toBe('');
    expect(addressGroup('0x7f.1')).toBe('0x7f.1');
  });
});
