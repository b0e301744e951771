import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './serve-process.test-support.js';

// #15: `agentinfra completion bash|zsh` completes commands, subcommands and options.
describe('agentinfra completion', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-completion-'));

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** What bash offers after `words` (the last one is being completed). */
  const complete = (script: string, words: readonly string[]): string[] => {
    const quoted = words.map((word) => `'${word}'`).join(' ');
    const result = spawnSync(
      'bash',
      ['-c', `source "${script}"; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _agentinfra; printf '%s\\n' "\${COMPREPLY[@]}"`],
      { encoding: 'utf8' },
    );
    expect(result.stderr).toBe('');
    return result.stdout.split('\n').filter(Boolean);
  };

  it('bash: commands, nested subcommands and options, skipping option values', async () => {
    const generated = await runCli(['completion', 'bash'], { cwd: dir });
    expect(generated.code).toBe(0);
    const script = join(dir, 'agentinfra.bash');
    writeFileSync(script, generated.stdout);
    expect(complete(script, ['agentinfra', 'ba'])).toEqual(['backup']);
    expect(complete(script, ['agentinfra', 're'])).toEqual(['restore']);
    expect(complete(script, ['agentinfra', 'audit', ''])).toEqual(['verify', '--help']);
    expect(complete(script, ['agentinfra', 'agents', 'create', '--agent', 'alice', '--'])).toEqual([
      '--agent',
      '--name',
      '--json',
      '--help',
    ]);
    expect(complete(script, ['agentinfra', 'backup', '--'])).toEqual(['--out', '--help']);
  });

  it('zsh: the same table through bashcompinit; other shells are a usage error', async () => {
    const zsh = await runCli(['completion', 'zsh'], { cwd: dir });
    expect(zsh.code).toBe(0);
    expect(zsh.stdout.startsWith('#compdef agentinfra\n')).toBe(true);
    expect(zsh.stdout).toContain('bashcompinit');
    expect(zsh.stdout).toContain('complete -o default -F _agentinfra agentinfra');
    expect((await runCli(['completion', 'fish'], { cwd: dir })).code).toBe(2);
  });
});
