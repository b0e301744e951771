import { describe, expect, it } from 'vitest';
import { aclDirections, peerPairs, portLabel } from './mesh-acls.js';

const acl = (from_agent: string, to_agent: string, port: number, proto: string) => ({ from_agent, to_agent, port, proto });

describe('mesh ACLs as the console shows them', () => {
  it('labels a port with its protocol, and ICMP without a port', () => {
    expect(portLabel({ port: 8080, proto: 'tcp' })).toBe('8080/tcp');
    expect(portLabel({ port: 53, proto: 'udp' })).toBe('53/udp');
    expect(portLabel({ port: 0, proto: 'icmp' })).toBe('icmp');
  });

  it('groups ACLs by direction for the graph', () => {
    expect(aclDirections([acl('bob', 'alice', 0, 'icmp'), acl('bob', 'alice', 8080, 'tcp'), acl('alice', 'bob', 22, 'tcp')])).toEqual([
      { from: 'bob', to: 'alice', ports: ['icmp', '8080/tcp'] },
      { from: 'alice', to: 'bob', ports: ['22/tcp'] },
    ]);
  });

  it('groups ACLs by unordered pair (one pre-shared key each), a→b first', () => {
    const pairs = peerPairs([
      acl('bob', 'alice', 0, 'icmp'),
      acl('bob', 'alice', 8080, 'tcp'),
      acl('carol', 'alice', 443, 'tcp'),
      acl('alice', 'bob', 22, 'tcp'),
    ]);
    expect(pairs.map((pair) => [pair.a, pair.b, pair.acls.length])).toEqual([
      ['alice', 'bob', 3],
      ['alice', 'carol', 1],
    ]);
    expect(pairs[0]?.directions).toEqual([
      { from: 'alice', to: 'bob', ports: ['22/tcp'] },
      { from: 'bob', to: 'alice', ports: ['icmp', '8080/tcp'] },
    ]);
  });
});
