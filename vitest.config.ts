import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Every test that passed only on its retry is listed at the end of the run (RETRIED ...): see the file.
    // The timing reporter writes nothing unless bench/test-cost.mjs asks (RMQ_BENCH_TEST_TIMING).
    reporters: ['default', './test/retry-reporter.ts', './test/timing-reporter.ts'],
    // Transformed modules kept on disk (node_modules/.experimental-vitest-cache, keyed by each
    // file's content): a warm run transforms only what changed, in each of the vitest
    // processes of scripts/test.sh (the unit tests and each tier's integration shards), which would
    // otherwise each transform the same files again.
    experimental: { fsModuleCache: true },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // One module graph for every file: the files import much the same src/ modules, which
          // a worker per file would import again for each (compare the CPU of
          // `vitest run --project unit --isolate`). No unit test keeps state in a module it
          // shares with another file.
          isolate: false,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          // One shared cluster: faults on it must not overlap.
          fileParallelism: false,
          // A shard's files one after another in one worker, as for the unit tests: a worker per
          // file would start and import the helpers again for each. The helpers keep no state
          // across files (the workshop's outcomes are shared on purpose), and no file mocks,
          // stubs or sets process.env.
          isolate: false,
          // No retry here: a test that may run again says so itself ({ retry: 1 }), with a comment
          // saying why, and only where its assertions are about timing, never about a lost or an
          // unexpected message (test/unit/test-retries.test.ts holds them to it). A pass on a
          // retry is listed at the end of the run (test/retry-reporter.ts).
          testTimeout: 180_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
