import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * For bench/test-cost.mjs: when RMQ_BENCH_TEST_TIMING names a file, an integration shard appends
 * one line per event to it: `<epoch ms> <init|start|end> <cluster> <file> <vitest's pid>`. Does nothing
 * otherwise (and nothing in the unit tests' run, which has no workshop part variable).
 */
export default class TimingReporter implements Reporter {
  readonly #file = process.env.RMQ_BENCH_TEST_TIMING;
  readonly #on = this.#file !== undefined && this.#file !== '' && process.env.RMQ_BENCH_WORKSHOP_PART !== undefined;
  readonly #cluster = process.env.RMQ_BENCH_NAME ?? 'rmq-bench';

  #write(event: string, file: string): void {
    if (this.#on) appendFileSync(this.#file!, `${Date.now()} ${event} ${this.#cluster} ${file} ${process.pid}\n`);
  }

  onInit(): void {
    this.#write('init', '-');
  }

  onTestModuleStart(m: TestModule): void {
    this.#write('start', m.moduleId.split('/').pop()!);
  }

  onTestModuleEnd(m: TestModule): void {
    this.#write('end', m.moduleId.split('/').pop()!);
  }
}
