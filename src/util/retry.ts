import { DeadlineError, InterruptedError } from '../errors.js';

/** Time source, injectable so that tests of waits run in milliseconds. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new InterruptedError());
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(new InterruptedError());
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

interface RetryOptions<T> {
  timeoutMs: number;
  intervalMs?: number;
  clock?: Clock;
  signal?: AbortSignal | undefined;
  /** One line for the DeadlineError: what was awaited; `last` is the last value or error seen. */
  describe: (last: { value?: T; error?: unknown }) => string;
  hint?: string;
}

/**
 * Call fn until predicate(value) holds, or the deadline passes (DeadlineError), or the signal
 * aborts (InterruptedError). Errors thrown by fn count as "not yet" and are kept for the message.
 */
export async function retryUntil<T>(fn: () => Promise<T>, predicate: (value: T) => boolean, options: RetryOptions<T>): Promise<T> {
  const clock = options.clock ?? systemClock;
  const intervalMs = options.intervalMs ?? 250;
  const start = clock.now();
  const last: { value?: T; error?: unknown } = {};
  for (;;) {
    if (options.signal?.aborted) throw new InterruptedError();
    try {
      const value = await fn();
      last.value = value;
      delete last.error;
      if (predicate(value)) return value;
    } catch (err) {
      if (err instanceof InterruptedError) throw err;
      last.error = err;
    }
    const elapsed = clock.now() - start;
    if (elapsed >= options.timeoutMs) {
      throw new DeadlineError(`${options.describe(last)} after ${options.timeoutMs} ms`, options.timeoutMs, {
        ...(options.hint === undefined ? {} : { hint: options.hint }),
        cause: last.error,
      });
    }
    await clock.sleep(Math.min(intervalMs, Math.max(0, options.timeoutMs - elapsed)), options.signal);
  }
}

/** Run fn with a deadline: rejects with DeadlineError(message) if it has not settled in time. */
export async function withDeadline<T>(fn: (signal: AbortSignal) => Promise<T>, timeoutMs: number, message: string): Promise<T> {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ac.abort();
      reject(new DeadlineError(`${message} after ${timeoutMs} ms`, timeoutMs));
    }, timeoutMs);
  });
  try {
    return await Promise.race([fn(ac.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

interface AttemptOptions {
  /** Attempts at most, the first included. */
  attempts: number;
  intervalMs: number;
  /** Whether a failure is worth another attempt; any other error is thrown at once. */
  isTransient: (err: unknown) => boolean;
  /** The error thrown when the last attempt fails too, from every attempt's error (default: the last one). */
  giveUp?: (errors: unknown[]) => unknown;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Call fn until it succeeds, at most `attempts` times, `intervalMs` apart, for as long as it
 * fails in a way `isTransient` accepts: for engine calls that a busy machine makes fail now and
 * then (pause, start), where the number of tries, not a deadline, bounds the wait.
 */
export async function retryTransient<T>(fn: () => Promise<T>, options: AttemptOptions): Promise<T> {
  const sleep = options.sleep ?? ((ms: number) => systemClock.sleep(ms));
  const errors: unknown[] = [];
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!options.isTransient(err)) throw err;
      errors.push(err);
      if (attempt >= options.attempts) throw options.giveUp ? options.giveUp(errors) : err;
      await sleep(options.intervalMs);
    }
  }
}
