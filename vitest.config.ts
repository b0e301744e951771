import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/** Every test file of the workspace. */
const TEST_FILES = ['packages/*/src/**/*.test.ts', 'examples/*/src/**/*.test.ts', 'examples/*/*.test.ts'];

/**
 * Test files that replace a module with `vi.mock`: each runs in a fresh
 * worker, so that no module evaluated under the mock serves another file.
 */
const MOCKING_MODULES = ['packages/module-postbox/src/mime-parser-pool.test.ts'];

/**
 * One vitest run over every package. Workspace packages resolve to their
 * TypeScript sources through the `@agentinfra/source` export condition, so
 * tests never run against a stale build.
 */
export default defineConfig({
  resolve: { conditions: ['@agentinfra/source'] },
  ssr: { resolve: { conditions: ['@agentinfra/source'] } },
  test: {
    // A test that runs several CLI processes (each ~2 s on an idle 2-core host, two to three times that while the
    // whole suite loads it) outgrew 30 s: backup-restore and the CLI walk-through failed by seconds in full runs.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll waits for what a loaded CI host may do seconds late (default 1 s).
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // Most test time is spent waiting on real servers (HTTP, SMTP, PostgreSQL,
    // chromium), so one worker more than the cores keeps them busy: on CI's 2
    // cores the default (one worker) took 9 minutes, 3 workers 4.5. At most 4,
    // so that PostgreSQL's 100 connections are never the limit.
    maxWorkers: Math.min(4, availableParallelism() + 1),
    reporters: ['default'],
    projects: [
      {
        extends: true,
        // Test files share their worker's modules instead of importing the
        // whole workspace again each (on CI's 2 cores: import 470 s -> 53 s,
        // the run 940 s -> 727 s). So a test file must leave no global state
        // behind: it stops what it starts, restores any environment variable
        // it sets and any spy (vi.restoreAllMocks), and mocks no module.
        test: { name: 'shared', isolate: false, include: TEST_FILES, exclude: [...configDefaults.exclude, ...MOCKING_MODULES] },
      },
      { extends: true, test: { name: 'isolated', isolate: true, include: MOCKING_MODULES } },
    ],
  },
});
