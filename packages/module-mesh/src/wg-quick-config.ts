/** The value of `PrivateKey` in the server's text; `agentinfra wg-config` replaces it on the host. */
export const PRIVATE_KEY_PLACEHOLDER = 'AGENTINFRA_PRIVATE_KEY';

/** One `[Peer]` section. */
export interface WgQuickPeer {
  agentId: string;
  publicKey: string;
  presharedKey: string;
  /** The peer's mesh address as a host route, e.g. `100.64.0.2/32`. */
  allowedIp: string;
  /** `<host>:<port>`, or `null` to leave `Endpoint` out (WireGuard then learns it from the peer's first handshake). */
  endpoint: string | null;
}

/** Everything a caller's wg-quick file holds. */
export interface WgQuickConfig {
  agentId: string;
  /** The caller's mesh address as a host route, e.g. `100.64.0.1/32`. */
  address: string;
  /** UDP port WireGuard listens on: the port of the caller's registered endpoint. */
  listenPort: number;
  /** Seconds; 0 leaves `PersistentKeepalive` out. */
  keepaliveSeconds: number;
  /** `PostUp` and `PreDown` commands (the nftables rules). */
  hooks: { up: string; down: string };
  /** Sorted by agent id, so that the same state always gives the same text. */
  peers: readonly WgQuickPeer[];
}

/**
 * Renders a wg-quick(8) configuration. `PrivateKey` holds
 * {@link PRIVATE_KEY_PLACEHOLDER}: the server never sees private keys, the
 * host fills it in. Agent ids appear only in comments (they cannot hold `#`
 * or line breaks). The text is deterministic: no timestamps, so an agent
 * can compare it with what it has to decide whether to reload.
 */
export function renderWgQuickConfig(config: WgQuickConfig): string {
  const lines = [
    `# agentinfra agent-mesh: WireGuard configuration of agent ${config.agentId}.`,
    '# PrivateKey is filled in on this host by `agentinfra wg-config`; the server never sees it.',
    '[Interface]',
    `Address = ${config.address}`,
    `ListenPort = ${config.listenPort}`,
    `PrivateKey = ${PRIVATE_KEY_PLACEHOLDER}`,
    `PostUp = ${config.hooks.up}`,
    `PreDown = ${config.hooks.down}`,
  ];
  for (const peer of config.peers) {
    lines.push(
      '',
      '[Peer]',
      `# ${peer.agentId}`,
      `PublicKey = ${peer.publicKey}`,
      `PresharedKey = ${peer.presharedKey}`,
      `AllowedIPs = ${peer.allowedIp}`,
    );
    if (peer.endpoint !== null) lines.push(`Endpoint = ${peer.endpoint}`);
    if (config.keepaliveSeconds > 0) lines.push(`PersistentKeepalive = ${config.keepaliveSeconds}`);
  }
  return `${lines.join('\n')}\n`;
}
