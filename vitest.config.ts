import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Every test that passed only on a retry is listed at the end (FLAKY ...): see the file.
    reporters: ['default', './test/retry-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          // One shared cluster: faults on it must not overlap.
          fileParallelism: false,
          // One retry: a real cluster on a busy machine has timing flakes; a retried pass is
          // reported as FLAKY (test/retry-reporter.ts), and a test that fails twice fails.
          retry: 1,
          testTimeout: 180_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
