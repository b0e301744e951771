import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmod, link, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError } from '../cli-error.js';

/**
 * `agentinfra wg-config` and the pieces `agentinfra mesh heartbeat` shares
 * with it: the agent host's side of agent-mesh. The private key is made and
 * kept on the host (X25519, RFC 7748, via node:crypto); only the public key
 * goes to the server.
 */

/** Where the config goes unless `--out` says otherwise. */
export const DEFAULT_WG_CONFIG_PATH = '/etc/wireguard/agent0.conf';

/** Canonical base64 of 32 bytes, as `wg genkey` / `wg pubkey` print keys. */
const BASE64_KEY = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
/** DER prefix of a PKCS #8 X25519 private key (RFC 8410); the 32 raw bytes follow. */
const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
/** wg-quick hooks run as root: only the mesh's own nftables command shape is accepted. */
const HOOK_LINE = /^(PreUp|PostUp|PreDown|PostDown)\s*=/;
const NFT_HOOK = /^(PreUp|PostUp|PreDown|PostDown)\s*=\s*nft '[^']*'\s*$/;

/** Connection settings shared by the mesh commands. */
export interface MeshConnection {
  /** Server base URL, with or without the `/functions/v1` suffix, e.g. `https://agents.example.com`. */
  url: string;
  /** Device key (or delegation token with mesh permissions, or the bridge key); default `AGENTINFRA_DEVICE_KEY`. */
  key?: string;
  /** Agent to act for: required with the bridge key, optional otherwise (the key's own agent). */
  agent?: string;
  /** Environment to read defaults from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/** Failure of a call to the server, with the HTTP status (0 when the server could not be reached). */
export class MeshCallError extends CliError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message, 1);
  }

  /** Whether retrying later may help (unreachable, 429 or 5xx), as opposed to a refusal that will not change. */
  get transient(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

/**
 * Parses an interval such as `30s`, `5m`, `1h`, `500ms` (a bare number means
 * seconds) into milliseconds.
 * @throws CliError (exit 2) for anything else or below 100 ms.
 */
export function parseInterval(value: string, option: string): number {
  const match = /^(\d+)(ms|s|m|h)?$/.exec(value.trim());
  const factor = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
  const ms = match ? Number(match[1]) * factor[(match[2] ?? 's') as keyof typeof factor] : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < 100)
    throw new CliError(`${option} must be an interval like 30s, 5m, 1h or 500ms (at least 100ms).`, 2);
  return ms;
}

/** Resolves the credential, base URL and agent of a mesh command. @throws CliError (exit 2) when the key or URL is missing or malformed. */
export function meshConnection(options: MeshConnection): { base: string; key: string; agent?: string } {
  const env = options.env ?? process.env;
  const key = options.key ?? env.AGENTINFRA_DEVICE_KEY;
  if (!key) throw new CliError('A device key is required: pass --key or set AGENTINFRA_DEVICE_KEY.', 2);
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new CliError(`--url must be an http(s) URL, got "${options.url}".`, 2);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`--url must be an http(s) URL, got "${options.url}".`, 2);
  const path = url.pathname.replace(/\/+$/, '');
  const base = `${url.origin}${path.endsWith('/functions/v1') ? path : `${path}/functions/v1`}`;
  return { base, key, ...(options.agent ? { agent: options.agent } : {}) };
}

/**
 * POSTs `body` to `agent-mesh/<path>` and returns the JSON (or, with
 * `text`, the text) answer.
 * @throws MeshCallError with the server's error code and message (never the key).
 */
export async function meshCall<T>(
  connection: { base: string; key: string },
  path: string,
  body: Record<string, unknown>,
  options: { text?: boolean; signal?: AbortSignal } = {},
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${connection.base}/agent-mesh${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${connection.key}`,
        'content-type': 'application/json',
        accept: options.text ? 'text/plain' : 'application/json',
      },
      body: JSON.stringify(body),
      signal: options.signal ?? null,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new MeshCallError(`${path}: cannot reach ${connection.base} (${cause?.code ?? cause?.message ?? (error as Error).message})`, 0);
  }
  const text = await response.text();
  if (!response.ok) {
    let detail = text.slice(0, 300);
    try {
      const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
      if (parsed.error) detail = `${parsed.error.code}: ${parsed.error.message}`;
    } catch {
      // Not a CONTRACT.md error body (a proxy's page): the start of the text is shown as is.
    }
    throw new MeshCallError(`${path}: HTTP ${response.status} ${detail}`, response.status);
  }
  return (options.text ? text : JSON.parse(text)) as T;
}

/** The host's WireGuard key pair, base64 like `wg genkey` / `wg pubkey`. */
export interface HostKeyPair {
  privateKey: string;
  publicKey: string;
}

/** The X25519 public key of a base64 private key (the same value `wg pubkey` prints). @throws CliError when it is not base64 of 32 bytes. */
export function publicKeyOf(privateKey: string, source: string): string {
  if (!BASE64_KEY.test(privateKey)) throw new CliError(`${source} does not hold a WireGuard private key (base64 of 32 bytes).`, 2);
  const der = Buffer.concat([PKCS8_X25519_PREFIX, Buffer.from(privateKey, 'base64')]);
  const jwk = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
  return Buffer.from(jwk.x as string, 'base64url').toString('base64');
}

/** A new X25519 key pair (RFC 7748) from node:crypto. */
export function generateHostKeyPair(): HostKeyPair {
  const jwk = generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' });
  return {
    privateKey: Buffer.from(jwk.d as string, 'base64url').toString('base64'),
    publicKey: Buffer.from(jwk.x as string, 'base64url').toString('base64'),
  };
}

/** Writes `data` to a new temp file beside `target` with mode 0600 and flushes it to disk. @returns the temp path. */
async function writeTempFile(target: string, data: string): Promise<string> {
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  return temp;
}

/** Flushes a directory entry change (rename, link) to disk where the platform allows it. */
async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r').catch(() => undefined);
  await handle?.sync().catch(() => undefined);
  await handle?.close();
}

/**
 * Reads the private key at `file`, or when it does not exist and `create`
 * is set, generates one and stores it there (mode 0600, never replacing a
 * file that appeared meanwhile).
 * @throws CliError when the file holds no key, or is missing and `create` is off.
 */
export async function loadOrCreateHostKey(file: string, create: boolean): Promise<HostKeyPair & { created: boolean }> {
  const existing = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new CliError(`Cannot read ${file}: ${error.message}`, 1);
  });
  if (existing !== undefined) {
    const privateKey = existing.trim();
    return { privateKey, publicKey: publicKeyOf(privateKey, file), created: false };
  }
  if (!create) {
    throw new CliError(
      `${file} does not exist: pass --endpoint <host:port> so that a new key pair is generated and its public key registered.`,
      2,
    );
  }
  const pair = generateHostKeyPair();
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temp = await writeTempFile(file, `${pair.privateKey}\n`);
  try {
    await link(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return await loadOrCreateHostKey(file, false);
  } finally {
    await unlink(temp);
  }
  await syncDirectory(dirname(file));
  return { ...pair, created: true };
}

/**
 * Puts `privateKey` into the `PrivateKey` line of the `[Interface]` section
 * of the server's wg-quick text.
 * @throws CliError when there is no such line, or when a hook line
 *   (`PreUp`/`PostUp`/`PreDown`/`PostDown`, which wg-quick runs as root) is
 *   anything but an `nft '…'` command: such a config is not written.
 */
export function fillPrivateKey(text: string, privateKey: string): string {
  let section = '';
  let filled = 0;
  const lines = text.split('\n').map((line) => {
    const trimmed = line.trim();
    if (/^\[.*\]$/.test(trimmed)) section = trimmed.toLowerCase();
    if (HOOK_LINE.test(trimmed) && !NFT_HOOK.test(trimmed)) {
      throw new CliError(
        `The server's config holds a hook that is not an nftables command; refusing to write it: ${trimmed.slice(0, 120)}`,
        1,
      );
    }
    if (section === '[interface]' && /^PrivateKey\s*=/.test(trimmed)) {
      filled += 1;
      return `PrivateKey = ${privateKey}`;
    }
    return line;
  });
  if (filled !== 1) throw new CliError(`The server's config has ${filled} PrivateKey lines in [Interface]; expected one.`, 1);
  return lines.join('\n');
}

/**
 * Writes `text` to `file` atomically (temp file, fsync, rename) with mode
 * 0600, unless the file already holds exactly `text` (then only its mode
 * is fixed).
 * @returns whether the content changed.
 */
export async function writeConfigFile(file: string, text: string): Promise<boolean> {
  const current = await readFile(file, 'utf8').catch(() => undefined);
  if (current === text) {
    if (((await stat(file)).mode & 0o777) !== 0o600) await chmod(file, 0o600);
    return false;
  }
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temp = await writeTempFile(file, text);
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(file));
  return true;
}

/** Aborts on SIGINT/SIGTERM unless the caller passes its own signal. @returns the signal and a function removing the handlers. */
export function stopSignal(signal: AbortSignal | undefined): { signal: AbortSignal; release: () => void } {
  if (signal) return { signal, release: () => undefined };
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    release: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

/** Waits `ms`; resolves `false` instead when `signal` aborts first. */
export async function waitOrStop(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

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

/**
 * `agentinfra wg-config`: makes or reads the host's private key, registers
 * its public key when an endpoint is given (always when the key was just
 * generated), fetches /wg_config, fills in `PrivateKey` locally and writes
 * the file (0600, atomically). With `watch`, repeats at the interval and
 * rewrites only on change; passing errors (server unreachable, 429, 5xx)
 * are logged and retried, refusals (401, 403, 404) end the run.
 * @throws CliError (exit 2) for bad options; MeshCallError (exit 1) when the server refuses.
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
    if (!self) throw new CliError('This agent has no registered mesh peer yet: pass --endpoint <host:port>.', 2);
    if (self.pubkey !== keys.publicKey) {
      throw new CliError(
        `The server holds another public key for this agent than ${options.privateKeyFile}: pass --endpoint to register this host's key.`,
        2,
      );
    }
  }

  const pass = async (signal?: AbortSignal): Promise<WgConfigResult> => {
    const text = await meshCall<string>(connection, '/wg_config', acting, { text: true, signal });
    const filled = fillPrivateKey(text, keys.privateKey);
    const changed = await writeConfigFile(out, filled);
    const peers = filled.split('\n').filter((line) => line.trim() === '[Peer]').length;
    if (changed) log(`wrote ${out} (${peers} peer${peers === 1 ? '' : 's'})`);
    return { file: out, publicKey: keys.publicKey, generated: keys.created, ...(address ? { address } : {}), changed, peers };
  };

  let result = await pass();
  if (interval === undefined) return result;
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
