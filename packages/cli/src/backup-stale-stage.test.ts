import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binPath, freshKeys, runCli } from './serve-process.test-support.js';

/**
 * Preloaded into a backup or restore (`--require`): the first call of
 * `fs.promises[STOP_AT]` creates the file STOP_MARK and stops the process
 * (SIGSTOP), midway, its staging folder made and filled in part.
 */
const STOP_HOOK = `
const fs = require('node:fs');
const promises = require('node:fs/promises');
const original = promises[process.env.STOP_AT];
let stopped = false;
promises[process.env.STOP_AT] = async function (...args) {
  if (!stopped) {
    stopped = true;
    fs.writeFileSync(process.env.STOP_MARK, '');
    process.kill(process.pid, 'SIGSTOP');
  }
  return original.apply(this, args);
};
require('node:module').syncBuiltinESMExports();
`;

/** The names in `dir` that start with `prefix`. */
const named = (dir: string, prefix: string) => readdirSync(dir).filter((name) => name.startsWith(prefix));

// Probe: a backup killed with SIGKILL left .agentinfra-backup-… (the database snapshot, secrets sealed but there) next
// to the archive for ever, and a restore killed while unpacking left .agentinfra-restore-… that every later restore
// refused to run past.
describe.runIf(process.platform === 'linux')('staging folders of killed backups and restores', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-stale-stage-'));
  const keys = { ...freshKeys(), AGENTINFRA_DATA_DIR: join(dir, 'data') };
  const hook = join(dir, 'stop-hook.cjs');
  const children: ChildProcess[] = [];

  /** Starts the CLI with the stop hook and resolves once it has stopped itself at `stopAt`. */
  async function startStopped(args: string[], stopAt: string, env: NodeJS.ProcessEnv = {}): Promise<ChildProcess> {
    const mark = join(dir, `stopped-${randomBytes(4).toString('hex')}`);
    const child = spawn(process.execPath, [binPath, ...args], {
      cwd: dir,
      env: { ...process.env, ...keys, ...env, NODE_OPTIONS: `--require ${hook}`, STOP_AT: stopAt, STOP_MARK: mark },
      stdio: 'ignore',
    });
    children.push(child);
    for (let waited = 0; !existsSync(mark); waited += 20) {
      if (waited > 30_000 || child.exitCode !== null) throw new Error(`${args.join(' ')} did not reach ${stopAt}`);
      await sleep(20);
    }
    // Stopped right after creating the mark.
    await sleep(100);
    return child;
  }

  const exitOf = (child: ChildProcess) =>
    new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.on('exit', resolve)));

  beforeAll(async () => {
    writeFileSync(hook, STOP_HOOK);
    expect((await runCli(['migrate'], { cwd: dir, env: keys })).code).toBe(0);
    for (const prefix of ['0a', '1b']) {
      mkdirSync(join(dir, 'data', 'blobs', 'objects', prefix), { recursive: true });
      writeFileSync(join(dir, 'data', 'blobs', 'objects', prefix, `${prefix}${randomBytes(8).toString('hex')}`), randomBytes(4096));
    }
  }, 60_000);

  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('the next backup removes the folder of a killed one, never that of a live one nor one it cannot tell', async () => {
    const out = join(dir, 'out');
    mkdirSync(out);
    // A live backup, stopped midway (started first: each backup cleans up as it starts).
    const live = await startStopped(['backup', '--out', join(out, 'live.tar.gz')], 'copyFile');
    const [liveStage] = named(out, '.agentinfra-backup-');
    expect(liveStage).toBeDefined();

    const killed = await startStopped(['backup', '--out', join(out, 'killed.tar.gz')], 'copyFile');
    const dead = named(out, '.agentinfra-backup-').find((name) => name !== liveStage);
    expect(dead).toBeDefined();
    expect(statSync(join(out, dead as string, 'agentinfra.db')).size).toBeGreaterThan(0);
    killed.kill('SIGKILL');
    await exitOf(killed);
    // Made by an older version (no lock in it): it cannot tell, so it stays.
    mkdirSync(join(out, '.agentinfra-backup-older'));
    writeFileSync(join(out, '.agentinfra-backup-older', 'agentinfra.db'), 'older');

    const next = await runCli(['backup', '--out', join(out, 'next.tar.gz')], { cwd: dir, env: keys });
    expect(next.stderr).toContain(`removed ${join(out, dead as string)}, left by a backup killed midway`);
    expect(next.code).toBe(0);
    expect(named(out, '').sort()).toEqual(['.agentinfra-backup-older', liveStage, 'next.tar.gz'].sort());

    live.kill('SIGCONT');
    expect(await exitOf(live)).toBe(0);
    expect(named(out, '').sort()).toEqual(['.agentinfra-backup-older', 'live.tar.gz', 'next.tar.gz'].sort());
  }, 90_000);

  it('a restore goes on past the folder of one killed while unpacking, and refuses one still running', async () => {
    const archive = join(dir, 'restore-from.tar.gz');
    expect((await runCli(['backup', '--out', archive], { cwd: dir, env: keys })).code).toBe(0);
    const target = join(dir, 'restored');
    const env = { AGENTINFRA_DATA_DIR: target };

    const killed = await startStopped(['restore', '--from', archive], 'chmod', env);
    const [dead] = named(target, '.agentinfra-restore-');
    expect(readdirSync(target)).toEqual([dead]);
    expect(statSync(join(target, dead as string, 'agentinfra.db')).size).toBeGreaterThan(0);

    const whileLive = await runCli(['restore', '--from', archive], { cwd: dir, env: { ...keys, ...env } });
    expect(whileLive.stderr).toContain(`holds ${dead}, which a running restore is writing`);
    expect(whileLive.code).toBe(2);

    killed.kill('SIGKILL');
    await exitOf(killed);
    const next = await runCli(['restore', '--from', archive], { cwd: dir, env: { ...keys, ...env } });
    expect(next.stderr).not.toContain('agentinfra:');
    expect(next.code).toBe(0);
    expect(readdirSync(target).sort()).toEqual(['agentinfra.db', 'blobs']);
  }, 90_000);
});
