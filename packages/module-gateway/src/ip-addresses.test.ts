import { describe, expect, it } from 'vitest';
import { ipListSchema, MAX_IPS_PER_HOST, normalizeIp } from './ip-addresses.js';

describe('normalizeIp (issue #8)', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['::1', '::1'],
    ['::ffff:192.0.2.1', '::ffff:192.0.2.1'],
    ['::FFFF:C000:0201', '::ffff:192.0.2.1'],
    ['fe80::1', 'fe80::1'],
    // Review: a dotted tail outside the ::ffff:0:0/96 prefix was stored as a mapped address never reported.
    ['::1.2.3.4', '::102:304'],
    ['::0.0.0.1', '::1'],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
  ])('normalises %s to %s', (input, ip) => {
    expect(normalizeIp(input)).toBe(ip);
  });

  it.each(['999.1.1.1', '::g', '1.2.3', '01.1.1.1', '0x7f.0.0.1', 'fe80::1%eth0', '1.2.3.4/32', 'example.com', '', ' 1.1.1.1'])(
    'refuses %j',
    (input) => {
      expect(normalizeIp(input)).toBeNull();
    },
  );

  it('deduplicates a dotted tail with the same address in hex', () => {
    expect(ipListSchema.parse(['::1.2.3.4', '::102:304', '::0.0.0.1', '::1'])).toEqual(['::1', '::102:304']);
  });

  it('deduplicates after normalising and sorts IPv4 before IPv6 in byte order', () => {
    expect(ipListSchema.parse(['2001:db8::1', '10.0.0.2', '2001:DB8:0::1', '10.0.0.10', '9.9.9.9', '10.0.0.2'])).toEqual([
      '9.9.9.9',
      '10.0.0.2',
      '10.0.0.10',
      '2001:db8::1',
    ]);
  });

  it('names every bad entry and caps the list', () => {
    const failed = ipListSchema.safeParse(['1.1.1.1', '999.1.1.1', '::g']);
    expect(failed.error?.issues.map((issue) => issue.path)).toEqual([[1], [2]]);
    expect(ipListSchema.safeParse(Array.from({ length: MAX_IPS_PER_HOST + 1 }, (_, i) => `10.0.${i >> 8}.${i & 255}`)).success).toBe(false);
  });
});
