import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `pnpm bench [name …]`: runs the named benchmarks (file names in bench/
 * without `.ts`), or every one, one after another, each in its own process.
 */
const here = dirname(fileURLToPath(import.meta.url));
const all = readdirSync(here)
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts' && !file.endsWith('.d.ts'))
  .map((file) => file.slice(0, -3))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !all.includes(name));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; available: ${all.join(', ')}\n`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : all) {
  process.stdout.write(`\n## ${name}\n\n`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(here, `${name}.ts`)], { stdio: 'inherit', cwd: here });
  if (result.status !== 0) failed += 1;
}
process.exit(failed > 0 ? 1 : 0);
