import type { Reporter, TestCase } from 'vitest/node';

/**
 * The integration tests run against real clusters on a busy 2-core machine, and a few of them
 * are timing-sensitive under load (five clusters at once). They get one retry (vitest.config.ts),
 * and this reporter makes sure a retry never goes unseen: every test that passed only on its
 * second try is listed at the end of the run as FLAKY, with its file.
 */
export default class RetryReporter implements Reporter {
  readonly #flaky: string[] = [];

  onTestCaseResult(testCase: TestCase): void {
    const d = testCase.diagnostic();
    if (d?.flaky) this.#flaky.push(`${testCase.module.moduleId} > ${testCase.fullName} (passed on try ${d.retryCount + 1})`);
  }

  onTestRunEnd(): void {
    if (this.#flaky.length === 0) return;
    process.stderr.write(`tests: ${this.#flaky.length} passed only when retried:\n${this.#flaky.map((f) => `  FLAKY ${f}\n`).join('')}`);
  }
}
