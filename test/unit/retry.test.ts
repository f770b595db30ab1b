import { describe, expect, it } from 'vitest';
import { DeadlineError, InterruptedError, errorMessage } from '../../src/errors.js';
import { retryTransient, retryUntil, type Clock } from '../../src/util/retry.js';

/** A clock whose sleep advances time at once; it records every sleep. */
function fakeClock(options: { honourSignal?: boolean } = {}): Clock & { t: number; sleeps: number[] } {
  const clock = {
    t: 1_000,
    sleeps: [] as number[],
    now: () => clock.t,
    sleep: async (ms: number, signal?: AbortSignal) => {
      if (options.honourSignal !== false && signal?.aborted) throw new InterruptedError();
      clock.sleeps.push(ms);
      clock.t += ms;
    },
  };
  return clock;
}

/** fn that returns the given results one per call (an Error is thrown), repeating the last. */
function sequence<T>(results: (T | Error)[]): { fn: () => Promise<T>; calls: () => number } {
  let i = 0;
  return {
    fn: async () => {
      const r = results[Math.min(i, results.length - 1)]!;
      i += 1;
      if (r instanceof Error) throw r;
      return r;
    },
    calls: () => i,
  };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

const describeLast = (last: { value?: string; error?: unknown }): string =>
  `leader of demo.orders not seen (last: ${last.error !== undefined ? `error ${errorMessage(last.error)}` : (last.value ?? 'nothing')})`;

describe('retryUntil', () => {
  const returns: { name: string; results: (string | Error)[]; intervalMs?: number; calls: number; sleeps: number[] }[] = [
    { name: 'holds at once: no sleep', results: ['rabbit@rabbit2'], calls: 1, sleeps: [] },
    { name: 'holds on the third call, default interval 250 ms', results: ['', '', 'rabbit@rabbit2'], calls: 3, sleeps: [250, 250] },
    { name: 'custom interval', results: ['', 'rabbit@rabbit3'], intervalMs: 100, calls: 2, sleeps: [100] },
    {
      name: 'errors from fn count as "not yet"',
      results: [new Error('ECONNREFUSED'), new Error('socket hang up'), 'rabbit@rabbit1'],
      calls: 3,
      sleeps: [250, 250],
    },
  ];

  it.each(returns)('returns when the predicate holds: $name', async ({ results, intervalMs, calls, sleeps }) => {
    const clock = fakeClock();
    const s = sequence(results);
    const value = await retryUntil(s.fn, (v) => v !== '', {
      timeoutMs: 10_000,
      clock,
      describe: describeLast,
      ...(intervalMs === undefined ? {} : { intervalMs }),
    });
    expect(value).toBe(results[calls - 1]);
    expect(s.calls()).toBe(calls);
    expect(clock.sleeps).toEqual(sleeps);
  });

  const timeouts: { name: string; results: (string | Error)[]; timeoutMs: number; intervalMs: number; message: string; calls: number; sleeps: number[] }[] = [
    {
      name: 'last value in the message; the final sleep is cut to the deadline',
      results: [''],
      timeoutMs: 1_000,
      intervalMs: 300,
      message: 'leader of demo.orders not seen (last: ) after 1000 ms',
      calls: 5,
      sleeps: [300, 300, 300, 100],
    },
    {
      name: "fn's last error is kept for describe",
      results: [new Error('connect ECONNREFUSED 127.0.0.1:15672')],
      timeoutMs: 500,
      intervalMs: 250,
      message: 'leader of demo.orders not seen (last: error connect ECONNREFUSED 127.0.0.1:15672) after 500 ms',
      calls: 3,
      sleeps: [250, 250],
    },
    {
      name: 'a value after an error clears the error',
      results: [new Error('timeout'), 'rabbit@rabbit1'],
      timeoutMs: 500,
      intervalMs: 250,
      message: 'leader of demo.orders not seen (last: rabbit@rabbit1) after 500 ms',
      calls: 3,
      sleeps: [250, 250],
    },
    {
      name: 'timeout 0: one call, no sleep',
      results: ['rabbit@rabbit1'],
      timeoutMs: 0,
      intervalMs: 250,
      message: 'leader of demo.orders not seen (last: rabbit@rabbit1) after 0 ms',
      calls: 1,
      sleeps: [],
    },
  ];

  it.each(timeouts)('DeadlineError after the timeout: $name', async ({ results, timeoutMs, intervalMs, message, calls, sleeps }) => {
    const clock = fakeClock();
    const s = sequence(results);
    // The predicate wants rabbit@rabbit2, which never comes.
    const err = await rejection(
      retryUntil(s.fn, (v) => v === 'rabbit@rabbit2', { timeoutMs, intervalMs, clock, describe: describeLast, hint: 'is the cluster up?' }),
    );
    expect(err).toBeInstanceOf(DeadlineError);
    const d = err as DeadlineError;
    expect(d.exitCode).toBe(75);
    expect(d.timeoutMs).toBe(timeoutMs);
    expect(d.message).toBe(message);
    expect(d.hint).toBe('is the cluster up?');
    expect(s.calls()).toBe(calls);
    expect(clock.sleeps).toEqual(sleeps);
  });

  it('keeps the last error as the cause of the DeadlineError', async () => {
    const clock = fakeClock();
    const cause = new Error('503 Service Unavailable');
    const err = await rejection(retryUntil(sequence<string>([cause]).fn, () => true, { timeoutMs: 100, clock, describe: describeLast }));
    expect(err).toBeInstanceOf(DeadlineError);
    expect((err as DeadlineError).cause).toBe(cause);
    expect((err as DeadlineError).hint).toBeUndefined();
  });

  it('InterruptedError when the signal is already aborted: fn is never called', async () => {
    const clock = fakeClock();
    const ac = new AbortController();
    ac.abort();
    const s = sequence(['']);
    const err = await rejection(retryUntil(s.fn, () => true, { timeoutMs: 10_000, clock, signal: ac.signal, describe: describeLast }));
    expect(err).toBeInstanceOf(InterruptedError);
    expect((err as InterruptedError).exitCode).toBe(130);
    expect(s.calls()).toBe(0);
  });

  it('InterruptedError when the signal aborts between calls (checked by the loop itself)', async () => {
    const clock = fakeClock({ honourSignal: false });
    const ac = new AbortController();
    let calls = 0;
    const fn = async (): Promise<string> => {
      calls += 1;
      if (calls === 2) ac.abort();
      return '';
    };
    const err = await rejection(retryUntil(fn, (v) => v !== '', { timeoutMs: 10_000, clock, signal: ac.signal, describe: describeLast }));
    expect(err).toBeInstanceOf(InterruptedError);
    expect(calls).toBe(2);
  });

  it('passes the signal to the clock, so a sleep can be interrupted', async () => {
    const clock = fakeClock();
    const ac = new AbortController();
    let calls = 0;
    const fn = async (): Promise<string> => {
      calls += 1;
      ac.abort();
      return '';
    };
    const err = await rejection(retryUntil(fn, (v) => v !== '', { timeoutMs: 10_000, clock, signal: ac.signal, describe: describeLast }));
    expect(err).toBeInstanceOf(InterruptedError);
    expect(calls).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('an InterruptedError thrown by fn is not retried', async () => {
    const clock = fakeClock();
    const s = sequence<string>([new InterruptedError()]);
    const err = await rejection(retryUntil(s.fn, () => true, { timeoutMs: 10_000, clock, describe: describeLast }));
    expect(err).toBeInstanceOf(InterruptedError);
    expect(s.calls()).toBe(1);
  });
});

describe('retryTransient: a bounded number of attempts while the failure is transient', () => {
  const transient = new Error('busy');
  const fatal = new Error('gone');
  /** fn fails with each of `failures` in turn, then returns 'ok'; it counts the calls. */
  const flaky = (failures: Error[]) => {
    const fn = async () => {
      fn.calls++;
      const e = failures.shift();
      if (e) throw e;
      return 'ok';
    };
    fn.calls = 0;
    return fn;
  };
  const options = { attempts: 3, intervalMs: 10, isTransient: (e: unknown) => e === transient, sleep: async () => undefined };

  it.each([
    { name: 'succeeds at once', failures: [] as Error[], calls: 1 },
    { name: 'succeeds on the last attempt', failures: [transient, transient], calls: 3 },
  ])('$name', async ({ failures, calls }) => {
    const fn = flaky([...failures]);
    await expect(retryTransient(fn, options)).resolves.toBe('ok');
    expect(fn.calls).toBe(calls);
  });

  it('a failure that is not transient: thrown at once', async () => {
    const fn = flaky([transient, fatal]);
    await expect(retryTransient(fn, options)).rejects.toBe(fatal);
    expect(fn.calls).toBe(2);
  });

  it('still failing after every attempt: the last error, or giveUp made from all of them', async () => {
    const last = new Error('busy 3');
    await expect(retryTransient(flaky([transient, transient, last, transient]), { ...options, isTransient: () => true })).rejects.toBe(last);
    const fn = flaky([transient, transient, transient]);
    await expect(retryTransient(fn, { ...options, giveUp: (errors) => new Error(`${errors.length} attempts`) })).rejects.toThrow('3 attempts');
    expect(fn.calls).toBe(3);
  });

  it('waits intervalMs between attempts, not after the last', async () => {
    const slept: number[] = [];
    await expect(retryTransient(flaky([transient, transient, transient]), { ...options, sleep: async (ms) => void slept.push(ms) })).rejects.toBe(transient);
    expect(slept).toEqual([10, 10]);
  });
});
