import { appendFileSync } from 'node:fs';
import type { Reporter, TestCase } from 'vitest/node';

/**
 * No test is retried unless it says so itself ({ retry: 1 } on a timing test, with a comment
 * saying why), and a retry never goes unseen: every test that passed only on a retry is listed
 * at the end of its vitest process as RETRIED, with its file. With RMQ_BENCH_RETRIED_FILE set
 * (scripts/test.sh sets it), the same lines are appended there, and the test command prints them
 * in its last lines, after the shards' interleaved output.
 */
export default class RetryReporter implements Reporter {
  readonly #retried: string[] = [];

  onTestCaseResult(testCase: TestCase): void {
    const d = testCase.diagnostic();
    if (d?.flaky) this.#retried.push(`${testCase.module.moduleId} > ${testCase.fullName} (passed on try ${d.retryCount + 1})`);
  }

  onTestRunEnd(): void {
    if (this.#retried.length === 0) return;
    const lines = this.#retried.map((f) => `  RETRIED ${f}\n`).join('');
    process.stderr.write(`tests: ${this.#retried.length} passed only on a retry:\n${lines}`);
    const file = process.env.RMQ_BENCH_RETRIED_FILE;
    if (file) appendFileSync(file, lines);
  }
}
