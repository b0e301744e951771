import { describe, expect, it } from 'vitest';
import { nftablesHooks } from './nftables-rules.js';
import { PRIVATE_KEY_PLACEHOLDER, renderWgQuickConfig } from './wg-quick-config.js';

describe('nftablesHooks', () => {
  it('opens only what the rules name and drops the rest of the mesh interface', () => {
    const hooks = nftablesHooks([
      { address: '100.64.0.3', proto: 'tcp', port: 8080 },
      { address: '100.64.0.2', proto: 'tcp', port: 22 },
      { address: '100.64.0.2', proto: 'udp', port: 53 },
      { address: '100.64.0.2', proto: 'icmp', port: 0 },
      { address: 'fd00::2', proto: 'icmp', port: 0 },
      { address: '100.64.0.2', proto: 'tcp', port: 22 },
    ]);
    expect(hooks.down).toBe("nft 'delete table inet agentinfra_mesh'");
    expect(hooks.up).toMatch(/^nft '[^']*'$/);
    const commands = hooks.up.slice(5, -1).split('; add rule inet agentinfra_mesh inbound ').slice(1);
    expect(commands).toEqual([
      'iifname != "%i" accept',
      'ct state established,related accept',
      'ip saddr . tcp dport { 100.64.0.2 . 22, 100.64.0.3 . 8080 } accept',
      'ip saddr . udp dport { 100.64.0.2 . 53 } accept',
      'ip saddr { 100.64.0.2 } meta l4proto icmp accept',
      'ip6 saddr { fd00::2 } meta l4proto ipv6-icmp accept',
      'drop',
    ]);
  });

  it('drops all inbound mesh traffic but replies when no ACL opens anything', () => {
    const { up } = nftablesHooks([]);
    expect(up).toContain('ct state established,related accept; add rule inet agentinfra_mesh inbound drop');
    expect(up).not.toContain('saddr');
  });
});

describe('renderWgQuickConfig', () => {
  const base = {
    agentId: 'alice',
    address: '100.64.0.1/32',
    listenPort: 51820,
    hooks: { up: "nft 'x'", down: "nft 'y'" },
    peers: [
      {
        agentId: 'bob',
        publicKey: `${'B'.repeat(43)}=`,
        presharedKey: `${'P'.repeat(43)}=`,
        allowedIp: '100.64.0.2/32',
        endpoint: '[2001:db8::2]:51820',
      },
    ],
  };

  it('writes [Interface] with the placeholder and one [Peer] per peer', () => {
    expect(renderWgQuickConfig({ ...base, keepaliveSeconds: 25 })).toBe(
      [
        '# agentinfra agent-mesh: WireGuard configuration of agent alice.',
        '# PrivateKey is filled in on this host by `agentinfra wg-config`; the server never sees it.',
        '[Interface]',
        'Address = 100.64.0.1/32',
        'ListenPort = 51820',
        `PrivateKey = ${PRIVATE_KEY_PLACEHOLDER}`,
        "PostUp = nft 'x'",
        "PreDown = nft 'y'",
        '',
        '[Peer]',
        '# bob',
        `PublicKey = ${'B'.repeat(43)}=`,
        `PresharedKey = ${'P'.repeat(43)}=`,
        'AllowedIPs = 100.64.0.2/32',
        'Endpoint = [2001:db8::2]:51820',
        'PersistentKeepalive = 25',
        '',
      ].join('\n'),
    );
  });

  it('leaves PersistentKeepalive out when it is 0', () => {
    expect(renderWgQuickConfig({ ...base, keepaliveSeconds: 0 })).not.toContain('PersistentKeepalive');
  });
});
