import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNLOCKED_STAGE_GRACE_MS } from './commands/stage-lock.js';
import { binPath, freshKeys, runCliInProcess } from './serve-process.test-support.js';

/**
 * Preloaded into a backup or restore (`--require`): the first call of
 * `fs.promises[STOP_AT]` creates the file STOP_MARK and stops the process
 * (SIGSTOP), midway, its staging folder made and filled in part; with
 * STOP_WHEN=after, once that call has done its work (`mkdtemp`: the staging
 * folder made, its lock not yet taken).
 */
const STOP_HOOK = `
const fs = require('node:fs');
const promises = require('node:fs/promises');
const original = promises[process.env.STOP_AT];
const after = process.env.STOP_WHEN === 'after';
let stopped = false;
const stopOnce = () => {
  if (stopped) return;
  stopped = true;
  fs.writeFileSync(process.env.STOP_MARK, '');
  process.kill(process.pid, 'SIGSTOP');
};
promises[process.env.STOP_AT] = async function (...args) {
  if (!after) stopOnce();
  const result = await original.apply(this, args);
  if (after) stopOnce();
  return result;
};
require('node:module').syncBuiltinESMExports();
`;

/** Sets the modification time of `path` to `ms` milliseconds ago (a folder left that long ago). */
const age = (path: string, ms: number) => {
  const then = new Date(Date.now() - ms);
  utimesSync(path, then, then);
};

/** The names in `dir` that start with `prefix`. */
const named = (dir: string, prefix: string) => readdirSync(dir).filter((name) => name.startsWith(prefix));

// Probe: a backup killed with SIGKILL left .agentinfra-backup-… (the database snapshot, secrets sealed but there) next
// to the archive for ever, and a restore killed while unpacking left .agentinfra-restore-… that every later restore
// refused to run past. Only the runs stopped midway need a process of their own; the others, which find what those
// left, run in this one (runCliInProcess).
describe.runIf(process.platform === 'linux')('staging folders of killed backups and restores', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-stale-stage-'));
  const keys = { ...freshKeys(), AGENTINFRA_DATA_DIR: join(dir, 'data') };
  const hook = join(dir, 'stop-hook.cjs');
  const children: ChildProcess[] = [];
  /** What each child started by {@link startStopped} wrote to stderr so far. */
  const stderrOf = new Map<ChildProcess, string>();

  /** Starts the CLI with the stop hook and resolves once it has stopped itself at `stopAt`. */
  async function startStopped(args: string[], stopAt: string, env: NodeJS.ProcessEnv = {}): Promise<ChildProcess> {
    const mark = join(dir, `stopped-${randomBytes(4).toString('hex')}`);
    const child = spawn(process.execPath, [binPath, ...args], {
      cwd: dir,
      env: { ...process.env, ...keys, ...env, NODE_OPTIONS: `--require ${hook}`, STOP_AT: stopAt, STOP_MARK: mark },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    stderrOf.set(child, '');
    child.stderr?.on('data', (chunk: Buffer) => stderrOf.set(child, `${stderrOf.get(child)}${chunk.toString()}`));
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
    expect((await runCliInProcess(['migrate'], { cwd: dir, env: keys })).code).toBe(0);
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

    const next = await runCliInProcess(['backup', '--out', join(out, 'next.tar.gz')], { cwd: dir, env: keys });
    expect(next.stderr).toContain(`removed ${join(out, dead as string)}, left by a backup killed midway`);
    expect(next.code).toBe(0);
    expect(named(out, '').sort()).toEqual(['.agentinfra-backup-older', liveStage, 'next.tar.gz'].sort());

    live.kill('SIGCONT');
    expect(await exitOf(live)).toBe(0);
    expect(named(out, '').sort()).toEqual(['.agentinfra-backup-older', 'live.tar.gz', 'next.tar.gz'].sort());
  }, 90_000);

  // Probe: a backup killed after making its folder but before locking it left a folder with no lock file that every
  // later backup skipped for ever (and a restore so killed, one that every later restore refused to run past).
  it('the next backup removes the folder of one killed before locking it, once past the grace period, never a starting one', async () => {
    const out = join(dir, 'out-unlocked');
    mkdirSync(out);
    const prefix = '.agentinfra-backup-';
    // A live backup, stopped between making its folder and locking it.
    const live = await startStopped(['backup', '--out', join(out, 'live.tar.gz')], 'mkdtemp', { STOP_WHEN: 'after' });
    const [liveStage] = named(out, prefix);
    expect(readdirSync(join(out, liveStage as string))).toEqual([]);

    const killedAt = async () => {
      const before = new Set(named(out, prefix));
      const killed = await startStopped(['backup', '--out', join(out, 'killed.tar.gz')], 'mkdtemp', { STOP_WHEN: 'after' });
      killed.kill('SIGKILL');
      await exitOf(killed);
      const [stage] = named(out, prefix).filter((name) => !before.has(name));
      expect(readdirSync(join(out, stage as string))).toEqual([]);
      return stage as string;
    };
    const killedLongAgo = await killedAt();
    const killedJustNow = await killedAt();
    // Killed while SQLite made the lock file, before it wrote it.
    const emptyLock = `${prefix}emptylock`;
    mkdirSync(join(out, emptyLock));
    writeFileSync(join(out, emptyLock, 'run.serve-lock'), '');
    for (const stage of [killedLongAgo, emptyLock]) age(join(out, stage), UNLOCKED_STAGE_GRACE_MS + 60_000);

    const next = await runCliInProcess(['backup', '--out', join(out, 'next.tar.gz')], { cwd: dir, env: keys });
    expect(next.code).toBe(0);
    for (const stage of [killedLongAgo, emptyLock])
      expect(next.stderr).toContain(`removed ${join(out, stage)}, left by a backup killed midway`);
    expect(named(out, '').sort()).toEqual([liveStage, killedJustNow, 'next.tar.gz'].sort());

    live.kill('SIGCONT');
    expect(await exitOf(live)).toBe(0);
    expect(named(out, '').sort()).toEqual([killedJustNow, 'live.tar.gz', 'next.tar.gz'].sort());
  }, 90_000);

  it('a backup stopped past the grace period before locking its folder fails with one clear line when it goes on, its folder removed by the next', async () => {
    const out = join(dir, 'out-stalled');
    mkdirSync(out);
    const stalled = await startStopped(['backup', '--out', join(out, 'stalled.tar.gz')], 'mkdtemp', { STOP_WHEN: 'after' });
    const [stage] = named(out, '.agentinfra-backup-');
    age(join(out, stage as string), UNLOCKED_STAGE_GRACE_MS + 60_000);
    const next = await runCliInProcess(['backup', '--out', join(out, 'next.tar.gz')], { cwd: dir, env: keys });
    expect(next.code).toBe(0);
    expect(next.stderr).toContain(`removed ${join(out, stage as string)}`);

    stalled.kill('SIGCONT');
    expect(await exitOf(stalled)).toBe(1);
    expect(stderrOf.get(stalled)).toContain(
      `agentinfra: ${join(out, stage as string)}, the folder this run made, was removed before the run could lock it`,
    );
    expect(named(out, '')).toEqual(['next.tar.gz']);
  }, 90_000);

  it('a restore goes on past the folder of one killed before locking it, once past the grace period', async () => {
    const archive = join(dir, 'restore-unlocked-from.tar.gz');
    expect((await runCliInProcess(['backup', '--out', archive], { cwd: dir, env: keys })).code).toBe(0);
    const target = join(dir, 'restored-unlocked');
    const env = { AGENTINFRA_DATA_DIR: target };
    const killed = await startStopped(['restore', '--from', archive], 'mkdtemp', { ...env, STOP_WHEN: 'after' });
    killed.kill('SIGKILL');
    await exitOf(killed);
    const [dead] = named(target, '.agentinfra-restore-');
    expect(readdirSync(target)).toEqual([dead]);
    expect(readdirSync(join(target, dead as string))).toEqual([]);

    const tooSoon = await runCliInProcess(['restore', '--from', archive], { cwd: dir, env: { ...keys, ...env } });
    expect(tooSoon.stderr).toContain(`holds ${dead}, left by an interrupted restore`);
    expect(tooSoon.code).toBe(2);

    age(join(target, dead as string), UNLOCKED_STAGE_GRACE_MS + 60_000);
    const next = await runCliInProcess(['restore', '--from', archive], { cwd: dir, env: { ...keys, ...env } });
    expect(next.stderr).not.toContain('agentinfra:');
    expect(next.code).toBe(0);
    expect(readdirSync(target).sort()).toEqual(['agentinfra.db', 'blobs']);
  }, 90_000);

  it('a restore goes on past the folder of one killed while unpacking, and refuses one still running', async () => {
    const archive = join(dir, 'restore-from.tar.gz');
    expect((await runCliInProcess(['backup', '--out', archive], { cwd: dir, env: keys })).code).toBe(0);
    const target = join(dir, 'restored');
    const env = { AGENTINFRA_DATA_DIR: target };

    const killed = await startStopped(['restore', '--from', archive], 'chmod', env);
    const [dead] = named(target, '.agentinfra-restore-');
    expect(readdirSync(target)).toEqual([dead]);
    expect(statSync(join(target, dead as string, 'agentinfra.db')).size).toBeGreaterThan(0);

    const whileLive = await runCliInProcess(['restore', '--from', archive], { cwd: dir, env: { ...keys, ...env } });
    expect(whileLive.stderr).toContain(`holds ${dead}, which a running restore is writing`);
    expect(whileLive.code).toBe(2);

    killed.kill('SIGKILL');
    await exitOf(killed);
    const next = await runCliInProcess(['restore', '--from', archive], { cwd: dir, env: { ...keys, ...env } });
    expect(next.stderr).not.toContain('agentinfra:');
    expect(next.code).toBe(0);
    expect(readdirSync(target).sort()).toEqual(['agentinfra.db', 'blobs']);
  }, 90_000);
});
