import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * One vitest run over every package. Workspace packages resolve to their
 * TypeScript sources through the `@agentinfra/source` export condition, so
 * tests never run against a stale build.
 */
export default defineConfig({
  resolve: { conditions: ['@agentinfra/source'] },
  ssr: { resolve: { conditions: ['@agentinfra/source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'examples/*/src/**/*.test.ts', 'examples/*/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Test files share their worker's modules instead of importing the whole
    // workspace again each (on CI's 2 cores: import 470 s -> 53 s, the run
    // 940 s -> 727 s). So a test file must leave no global state behind: it
    // stops what it starts and restores any environment variable it sets.
    isolate: false,
    // Most test time is spent waiting on real servers (HTTP, SMTP, PostgreSQL,
    // chromium), so one worker more than the cores keeps them busy: on CI's 2
    // cores the default (one worker) took 9 minutes, 3 workers 4.5. At most 4,
    // so that PostgreSQL's 100 connections are never the limit.
    maxWorkers: Math.min(4, availableParallelism() + 1),
    reporters: ['default'],
  },
});
