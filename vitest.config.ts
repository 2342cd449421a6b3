import { defineConfig } from 'vitest/config';

// PGlite costs ~0.8 GB and a few seconds per instance: two forks on these 2-core machines.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
