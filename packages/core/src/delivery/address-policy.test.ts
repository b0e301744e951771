import { describe, expect, it } from 'vitest';
import { type AddressClass, classifyAddress } from './address-policy.js';

const cases: Array<[address: string, allowed: boolean, expected: AddressClass]> = [
  ['8.8.8.8', true, 'public'],
  ['93.184.216.34', true, 'public'],
  ['1.1.1.1', true, 'public'],
  ['127.0.0.1', false, 'loopback'],
  ['127.255.255.254', false, 'loopback'],
  ['10.0.0.1', false, 'private'],
  ['172.16.0.1', false, 'private'],
  ['172.31.255.255', false, 'private'],
  ['172.32.0.1', true, 'public'],
  ['192.168.1.1', false, 'private'],
  ['100.64.0.1', false, 'carrier-grade-nat'],
  ['100.127.255.255', false, 'carrier-grade-nat'],
  ['100.128.0.1', true, 'public'],
  ['169.254.169.254', false, 'link-local'],
  ['169.254.0.1', false, 'link-local'],
  ['0.0.0.0', false, 'unspecified'],
  ['0.1.2.3', false, 'unspecified'],
  ['224.0.0.1', false, 'multicast'],
  ['239.255.255.250', false, 'multicast'],
  ['255.255.255.255', false, 'broadcast'],
  ['192.0.2.1', false, 'reserved'],
  ['198.18.0.1', false, 'reserved'],
  ['240.0.0.1', false, 'reserved'],
  ['2606:4700:4700::1111', true, 'public'],
  ['2001:4860:4860::8888', true, 'public'],
  ['::1', false, 'loopback'],
  ['::', false, 'unspecified'],
  ['fc00::1', false, 'unique-local'],
  ['fd12:3456:789a::1', false, 'unique-local'],
  ['fe80::1', false, 'link-local'],
  ['febf::1', false, 'link-local'],
  ['fec0::1', false, 'link-local'],
  ['ff02::1', false, 'multicast'],
  ['2001:db8::1', false, 'reserved'],
  ['64:ff9b::a00:1', false, 'ipv4-translated'],
  ['2002:7f00:1::1', false, 'ipv4-translated'],
  ['2001:0:4136:e378::1', false, 'ipv4-translated'],
  ['100::1', false, 'reserved'],
  ['4000::1', false, 'not-global-unicast'],
  ['[::1]', false, 'loopback'],
  ['fe80::1%eth0', false, 'invalid'],
  ['example.com', false, 'invalid'],
  ['', false, 'invalid'],
];

describe('classifyAddress', () => {
  it.each(cases)('%s → allowed %s (%s)', (address, allowed, expected) => {
    expect(classifyAddress(address)).toMatchObject({ allowed, class: expected });
  });

  it.each([
    ['::ffff:127.0.0.1', false, 'loopback', '127.0.0.1'],
    ['::ffff:7f00:1', false, 'loopback', '127.0.0.1'],
    ['::ffff:10.1.2.3', false, 'private', '10.1.2.3'],
    ['::ffff:169.254.169.254', false, 'link-local', '169.254.169.254'],
    ['::ffff:100.64.0.1', false, 'carrier-grade-nat', '100.64.0.1'],
    ['::ffff:0.0.0.0', false, 'unspecified', '0.0.0.0'],
    ['::ffff:8.8.8.8', true, 'public', '8.8.8.8'],
    ['::127.0.0.1', false, 'loopback', '127.0.0.1'],
    ['::7f00:1', false, 'loopback', '127.0.0.1'],
    ['::a9fe:a9fe', false, 'link-local', '169.254.169.254'],
  ])('IPv4-mapped/-compatible %s → allowed %s (%s of %s)', (address, allowed, expected, embedded) => {
    expect(classifyAddress(address)).toEqual({ allowed, class: expected, embeddedIpv4: embedded });
  });
});
