/**
 * Progress for people, on stderr: what a scenario reports while it runs. Never writes to
 * stdout. The terminal implementations (an ora spinner on a TTY, plain lines elsewhere) are
 * in src/cli/progress.ts; scenarios and the context only know this interface.
 */
export interface Progress {
  start(text: string): void;
  update(text: string): void;
  succeed(text?: string): void;
  fail(text?: string): void;
  info(text: string): void;
  warn(text: string): void;
  stop(): void;
}

/** Says nothing (RMQ_BENCH_QUIET=1, tests). */
export const silentProgress: Progress = {
  start() {},
  update() {},
  succeed() {},
  fail() {},
  info() {},
  warn() {},
  stop() {},
};
