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
    reporters: ['default'],
  },
});
