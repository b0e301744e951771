import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { toolEnv } from '@agentinfra/testkit';
import { runCommand } from './processes.js';

/** One end of the lab: a network namespace with a veth address and a WireGuard interface name. */
export interface LabHost {
  /** Network namespace name. */
  ns: string;
  /** Address of its veth end (the underlay the endpoints use). */
  underlay: string;
  /** Name of its WireGuard interface (unique on the machine: wireguard-go's socket lives in /var/run/wireguard). */
  iface: string;
}

/**
 * Two network namespaces joined by a veth pair, with the processes started
 * in them. `cleanup` kills every process the lab started (by pid) and
 * deletes both namespaces (which removes the veth pair and the interfaces);
 * it never throws, so it can run after any failure.
 */
export interface NamespaceLab {
  a: LabHost;
  b: LabHost;
  /** Runs a command inside `host`'s namespace (PATH = `TOOL_PATH`, as for every command here) and returns its stdout. */
  exec(host: LabHost, command: string, args: readonly string[], options?: { input?: string; timeoutMs?: number }): Promise<string>;
  /** Starts a long-running process inside `host`'s namespace; it is killed by `cleanup`. */
  spawn(host: LabHost, command: string, args: readonly string[]): ChildProcess;
  /** Starts `wireguard-go` in the foreground for `host.iface` and waits for its control socket. */
  startWireguard(host: LabHost): Promise<void>;
  /**
   * Applies a wg-quick file the way `wg-quick up` does with a userspace
   * implementation: `wg setconf` with the stripped config, `Address`, link
   * up, a route per `AllowedIPs`, then the `PostUp` hooks with `%i` replaced.
   */
  applyConfig(host: LabHost, file: string): Promise<void>;
  /** Re-applies only the WireGuard part (`wg setconf` on the stripped file), as after a refresh. */
  reloadConfig(host: LabHost, file: string): Promise<void>;
  /** Runs the `PreDown` hooks of a wg-quick file with `%i` replaced. */
  runPreDown(host: LabHost, file: string): Promise<void>;
  cleanup(): Promise<void>;
}

function values(config: string, key: string): string[] {
  return config
    .split('\n')
    .map((line) => new RegExp(`^${key}\\s*=\\s*(.*)$`).exec(line.trim())?.[1])
    .filter((value): value is string => value !== undefined);
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit').catch(() => undefined);
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
  await exited;
  clearTimeout(timer);
}

/**
 * Makes the lab: namespaces `aimesh-<id>-a`/`-b`, a veth pair between them
 * with `10.201.<n>.1/24` and `.2/24`, loopback up in both.
 * @throws the failing `ip` command's error (after cleaning up what was made).
 */
export async function createNamespaceLab(): Promise<NamespaceLab> {
  const id = randomBytes(3).toString('hex');
  const subnet = 1 + (Number.parseInt(id, 16) % 250);
  const a: LabHost = { ns: `aimesh-${id}-a`, underlay: `10.201.${subnet}.1`, iface: `wga${id}` };
  const b: LabHost = { ns: `aimesh-${id}-b`, underlay: `10.201.${subnet}.2`, iface: `wgb${id}` };
  const children: ChildProcess[] = [];
  const made: string[] = [];

  const exec: NamespaceLab['exec'] = (host, command, args, options) =>
    runCommand('ip', ['netns', 'exec', host.ns, command, ...args], options);

  const lab: NamespaceLab = {
    a,
    b,
    exec,
    spawn(host, command, args) {
      const child = spawn('ip', ['netns', 'exec', host.ns, command, ...args], { env: toolEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      child.on('error', () => undefined);
      children.push(child);
      return child;
    },
    async startWireguard(host) {
      const child = lab.spawn(host, 'wireguard-go', ['-f', host.iface]);
      let output = '';
      const collect = (chunk: Buffer) => {
        output += chunk.toString();
      };
      child.stderr?.on('data', collect);
      child.stdout?.on('data', collect);
      const socket = `/var/run/wireguard/${host.iface}.sock`;
      const deadline = Date.now() + 10_000;
      while (!existsSync(socket)) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`wireguard-go ${host.iface} did not start: ${output.trim()}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async applyConfig(host, file) {
      const config = await readFile(file, 'utf8');
      await lab.reloadConfig(host, file);
      for (const address of values(config, 'Address').flatMap((value) => value.split(/\s*,\s*/))) {
        await exec(host, 'ip', ['address', 'add', address, 'dev', host.iface]);
      }
      await exec(host, 'ip', ['link', 'set', 'mtu', '1420', 'up', 'dev', host.iface]);
      for (const allowed of values(config, 'AllowedIPs').flatMap((value) => value.split(/\s*,\s*/))) {
        await exec(host, 'ip', [allowed.includes(':') ? '-6' : '-4', 'route', 'add', allowed, 'dev', host.iface]);
      }
      for (const hook of values(config, 'PostUp')) await exec(host, 'bash', ['-c', hook.replaceAll('%i', host.iface)]);
    },
    async reloadConfig(host, file) {
      const stripped = await runCommand('wg-quick', ['strip', file]);
      const strippedFile = `${file}.stripped`;
      await writeFile(strippedFile, stripped, { mode: 0o600 });
      await exec(host, 'wg', ['setconf', host.iface, strippedFile]);
    },
    async runPreDown(host, file) {
      const config = await readFile(file, 'utf8');
      for (const hook of values(config, 'PreDown')) await exec(host, 'bash', ['-c', hook.replaceAll('%i', host.iface)]);
    },
    async cleanup() {
      await Promise.all(children.map((child) => stopProcess(child).catch(() => undefined)));
      for (const ns of made.reverse()) await runCommand('ip', ['netns', 'delete', ns]).catch(() => undefined);
    },
  };

  try {
    for (const host of [a, b]) {
      await runCommand('ip', ['netns', 'add', host.ns]);
      made.push(host.ns);
    }
    const vethA = `aim${id}a`;
    const vethB = `aim${id}b`;
    await runCommand('ip', ['link', 'add', vethA, 'netns', a.ns, 'type', 'veth', 'peer', 'name', vethB, 'netns', b.ns]);
    for (const [host, veth] of [
      [a, vethA],
      [b, vethB],
    ] as const) {
      await exec(host, 'ip', ['link', 'set', 'lo', 'up']);
      await exec(host, 'ip', ['address', 'add', `${host.underlay}/24`, 'dev', veth]);
      await exec(host, 'ip', ['link', 'set', veth, 'up']);
    }
  } catch (error) {
    await lab.cleanup();
    throw error;
  }
  return lab;
}
