import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/** Where the generated route table lives, relative to the repository root. */
export const ROUTE_TABLE_PATH = 'packages/client/src/generated/routes.ts';

/**
 * `text` as the repository's biome configuration formats `src/generated/routes.ts`
 * (the committed file passes `biome check` like every other file).
 * @throws Error when biome cannot be run or rejects the text.
 */
export function formatRouteTable(text: string): string {
  const result = spawnSync('pnpm', ['exec', 'biome', 'format', `--stdin-file-path=${ROUTE_TABLE_PATH}`], {
    cwd: repoRoot,
    input: text,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`biome format failed: ${result.stderr}`);
  return result.stdout;
}
