import { readFile } from 'node:fs/promises';
import { writeConfigFile } from './atomic-file.js';
import { MeshCallError, MeshHostError } from './host-error.js';
import { loadOrCreateHostKey } from './host-keys.js';
import { type MeshConnection, meshCall, meshConnection, parseInterval } from './mesh-connection.js';
import { resolvePeerEndpoints } from './peer-endpoints.js';
import { stopSignal, waitOrStop } from './stop-signal.js';
import { fillPrivateKey } from './wg-config-text.js';

/** Where the config goes unless `--out` says otherwise. */
export const DEFAULT_WG_CONFIG_PATH = '/etc/wireguard/agent0.conf';

/** Options of {@link runWgConfig}. */
export interface WgConfigOptions extends MeshConnection {
  /** Base64 private key (like `wg genkey` writes); generated with mode 0600 when missing. */
  privateKeyFile: string;
  /** The wg-quick file to write (mode 0600, atomically); default {@link DEFAULT_WG_CONFIG_PATH}. */
  out?: string;
  /**
   * `<host>:<port>` other peers reach this host at (its port becomes
   * `ListenPort`). When given, the public key and endpoint are (re)registered;
   * required when the private key file does not exist yet.
   */
  endpoint?: string;
  /** Re-fetch at this interval (`30s`, `5m`, …) and rewrite the file only when it changes, until stopped. */
  watch?: string;
  /** Stops `watch` (default: SIGINT or SIGTERM). */
  signal?: AbortSignal;
  /** Progress lines (default: stdout). */
  log?: (line: string) => void;
}

/** What the last pass of {@link runWgConfig} did. */
export interface WgConfigResult {
  file: string;
  publicKey: string;
  /** The private key file was created in this run. */
  generated: boolean;
  /** The mesh address, when this run registered the key. */
  address?: string;
  /** The file's content changed in the last pass. */
  changed: boolean;
  /** `[Peer]` sections in the config. */
  peers: number;
}

/** `1 peer`, `3 peers`. */
const peerCount = (peers: number) => `${peers} peer${peers === 1 ? '' : 's'}`;

/**
 * `agentinfra wg-config`: makes or reads the host's private key, registers
 * its public key when an endpoint is given (always when the key was just
 * generated), fetches /wg_config, fills in `PrivateKey` locally, puts the
 * address of each peer's DNS-name endpoint in its place, or leaves out the
 * `Endpoint` of a peer whose name does not resolve on this host, or whose
 * endpoint is not one wg can parse (wg would
 * refuse the whole file; see {@link resolvePeerEndpoints}) and writes the
 * file (0600, atomically). With `watch`, repeats at the interval and
 * rewrites only on change (a first pass that finds the file current says
 * `<out> unchanged (N peers); watching for changes every <watch>`);
 * passing errors (server unreachable, 429, 5xx) are logged and retried,
 * refusals (401, 403, 404) end the run.
 * @throws MeshHostError (exit 2) for bad options; MeshCallError (exit 1) when the server refuses.
 */
export async function runWgConfig(options: WgConfigOptions): Promise<WgConfigResult> {
  const connection = meshConnection(options);
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const out = options.out ?? DEFAULT_WG_CONFIG_PATH;
  const interval = options.watch === undefined ? undefined : parseInterval(options.watch, '--watch');
  const acting = connection.agent ? { agent_id: connection.agent } : {};

  const keys = await loadOrCreateHostKey(options.privateKeyFile, options.endpoint !== undefined);
  if (keys.created) log(`generated a key pair in ${options.privateKeyFile}; public key ${keys.publicKey}`);
  let address: string | undefined;
  if (options.endpoint !== undefined) {
    const registered = await meshCall<{ agent_id: string; address: string }>(connection, '/peer/register', {
      ...acting,
      pubkey: keys.publicKey,
      endpoint: options.endpoint,
    });
    address = registered.address;
    log(`registered ${registered.agent_id} at ${options.endpoint}: mesh address ${registered.address}`);
  } else {
    const { self } = await meshCall<{ self: { pubkey: string } | null }>(connection, '/netmap', acting);
    if (!self) throw new MeshHostError('This agent has no registered mesh peer yet: pass --endpoint <host:port>.', 2);
    if (self.pubkey !== keys.publicKey) {
      throw new MeshHostError(
        `The server holds another public key for this agent than ${options.privateKeyFile}: pass --endpoint to register this host's key.`,
        2,
      );
    }
  }

  const pass = async (signal?: AbortSignal): Promise<WgConfigResult> => {
    const text = await meshCall<string>(connection, '/wg_config', acting, { text: true, signal });
    const previous = await readFile(out, 'utf8').catch(() => '');
    const checked = await resolvePeerEndpoints(fillPrivateKey(text, keys.privateKey), undefined, previous);
    const changed = await writeConfigFile(out, checked.text);
    const peers = checked.text.split('\n').filter((line) => line.trim() === '[Peer]').length;
    if (changed) {
      log(`wrote ${out} (${peerCount(peers)})`);
      for (const { peer, endpoint, reason } of checked.dropped) {
        const why = reason === 'invalid' ? 'is not a valid <host>:<port> that wg can parse' : `does not resolve here (${reason})`;
        log(`peer ${peer}: its endpoint ${endpoint} ${why}; written without Endpoint, so WireGuard waits for ${peer} to connect first`);
      }
    }
    return { file: out, publicKey: keys.publicKey, generated: keys.created, ...(address ? { address } : {}), changed, peers };
  };

  let result = await pass();
  if (interval === undefined) return result;
  if (!result.changed) log(`${out} unchanged (${peerCount(result.peers)}); watching for changes every ${options.watch}`);
  const { signal, release } = stopSignal(options.signal);
  try {
    while (await waitOrStop(interval, signal)) {
      try {
        result = await pass(signal);
      } catch (error) {
        if (signal.aborted) break;
        if (!(error instanceof MeshCallError && error.transient)) throw error;
        log(`agentinfra wg-config: ${error.message}; retrying in ${options.watch}`);
      }
    }
  } finally {
    release();
  }
  return result;
}
