import { beforeEach, describe, expect, it, vi } from 'vitest';
import { connectAny } from '../../src/client/amqp091/connect.js';
import { type BrokerWait, NO_BROKER_HINT, nextRound, noBrokerCode, noBrokerMessage } from '../../src/client/connect-any.js';
import { NoBrokerError } from '../../src/errors.js';
import { loadConfig } from '../../src/config.js';
import { BrokerUnavailableError, ExitCode, UsageError } from '../../src/errors.js';
import type { Clock } from '../../src/util/retry.js';
import { captureOutput, invocationOf, parse } from './program-harness.js';

/** amqplib's connect, answered by each test (connectAny imports amqplib when it first connects). */
const amqpConnect = vi.hoisted(() => vi.fn<(url: string) => Promise<unknown>>());
vi.mock('amqplib', () => ({ default: { connect: amqpConnect } }));

/** A socket error as Node gives it: a message and a code. */
const socketError = (code: string, message = `connect ${code} 127.0.0.1:1`): Error => Object.assign(new Error(message), { code });

/** Time that passes only in sleep(), so that the waits run in no time; slept records each wait. */
function fakeClock(): Clock & { slept: number[] } {
  let t = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => t,
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
  };
}

const URLS = ['amqp://demo:s3cret@127.0.0.1:1', 'amqp://demo:s3cret@127.0.0.1:2', 'amqp://demo:s3cret@127.0.0.1:3'];

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (err: unknown) => err,
  );
}

describe('nextRound: what connectAny does after a round that connected nowhere', () => {
  const firstWith = (waitMs: number): BrokerWait => ({ waitMs, reached: false });
  const after: BrokerWait = { waitMs: 0, reached: true };
  const cases: { name: string; round: number; elapsedMs: number; timeoutMs: number; refused: boolean; wait: BrokerWait; expected: unknown }[] = [
    {
      name: 'first connection, every URL refused, no wait: no broker at once',
      round: 0,
      elapsedMs: 5,
      timeoutMs: 60_000,
      refused: true,
      wait: firstWith(0),
      expected: { kind: 'no-broker' },
    },
    {
      name: 'first connection, refused, inside the wait: retry with the backoff',
      round: 0,
      elapsedMs: 5,
      timeoutMs: 60_000,
      refused: true,
      wait: firstWith(3_000),
      expected: { kind: 'retry', delayMs: 100 },
    },
    {
      name: 'first connection, refused, the backoff cut to the end of the wait',
      round: 5,
      elapsedMs: 2_500,
      timeoutMs: 60_000,
      refused: true,
      wait: firstWith(3_000),
      expected: { kind: 'retry', delayMs: 500 },
    },
    {
      name: 'first connection, refused, the wait over: no broker',
      round: 6,
      elapsedMs: 3_000,
      timeoutMs: 60_000,
      refused: true,
      wait: firstWith(3_000),
      expected: { kind: 'no-broker' },
    },
    {
      name: 'first connection, not refused (a timeout): the deadline of the caller',
      round: 0,
      elapsedMs: 5_000,
      timeoutMs: 60_000,
      refused: false,
      wait: firstWith(0),
      expected: { kind: 'retry', delayMs: 100 },
    },
    {
      name: 'first connection, not refused, past the deadline of the caller',
      round: 9,
      elapsedMs: 60_000,
      timeoutMs: 60_000,
      refused: false,
      wait: firstWith(0),
      expected: { kind: 'deadline', deadlineMs: 60_000 },
    },
    {
      name: 'first connection, not refused: a longer wait stretches the deadline',
      round: 9,
      elapsedMs: 60_000,
      timeoutMs: 60_000,
      refused: false,
      wait: firstWith(120_000),
      expected: { kind: 'retry', delayMs: 2_000 },
    },
    {
      name: 'first connection, not refused, past the stretched deadline',
      round: 70,
      elapsedMs: 120_000,
      timeoutMs: 60_000,
      refused: false,
      wait: firstWith(120_000),
      expected: { kind: 'deadline', deadlineMs: 120_000 },
    },
    {
      name: 'after a connection: refused is a fault to ride out (retry)',
      round: 0,
      elapsedMs: 5,
      timeoutMs: 60_000,
      refused: true,
      wait: after,
      expected: { kind: 'retry', delayMs: 100 },
    },
    {
      name: 'after a connection: the deadline of the caller, never the wait',
      round: 9,
      elapsedMs: 1_000,
      timeoutMs: 1_000,
      refused: true,
      wait: { waitMs: 120_000, reached: true },
      expected: { kind: 'deadline', deadlineMs: 1_000 },
    },
  ];

  it.each(cases)('$name', ({ expected, ...r }) => {
    expect(nextRound(r)).toEqual(expected);
  });
});

describe('noBrokerCode: which socket errors say no broker is there', () => {
  it.each(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENOTFOUND'])('%s', (code) => {
    expect(noBrokerCode(socketError(code))).toBe(code);
  });

  it.each([
    { name: 'a timeout', err: socketError('ETIMEDOUT') },
    { name: 'a reset (a broker that accepted, then closed)', err: socketError('ECONNRESET') },
    { name: 'an AMQP refusal (no code)', err: new Error('Handshake terminated by server: 403 (ACCESS-REFUSED)') },
    { name: "a code named like an Object method ('toString')", err: socketError('toString') },
    { name: 'not an error', err: 'ECONNREFUSED' },
    { name: 'undefined', err: undefined },
  ])('not: $name', ({ err }) => {
    expect(noBrokerCode(err)).toBeUndefined();
  });

  it('an AggregateError (a name with several addresses), every address refused', () => {
    expect(noBrokerCode(new AggregateError([socketError('ECONNREFUSED'), socketError('ECONNREFUSED')], ''))).toBe('ECONNREFUSED');
  });

  it('an AggregateError with one address that timed out is not', () => {
    expect(noBrokerCode(new AggregateError([socketError('ECONNREFUSED'), socketError('ETIMEDOUT')], ''))).toBeUndefined();
  });
});

describe('noBrokerMessage', () => {
  it('one cause: the addresses, then the cause', () => {
    const refusals = [
      { url: 'amqp://demo:***@127.0.0.1:1', code: 'ECONNREFUSED' },
      { url: 'amqp://demo:***@127.0.0.1:2', code: 'ECONNREFUSED' },
    ];
    expect(noBrokerMessage(refusals, 0)).toBe('no broker at amqp://demo:***@127.0.0.1:1, amqp://demo:***@127.0.0.1:2: connection refused (ECONNREFUSED)');
  });

  it('after a wait: how long', () => {
    expect(noBrokerMessage([{ url: 'amqp://h:5672', code: 'EHOSTUNREACH' }], 3_000)).toBe(
      'no broker at amqp://h:5672 after waiting 3s: host unreachable (EHOSTUNREACH)',
    );
  });

  it('different causes: each address with its own', () => {
    const refusals = [
      { url: 'amqp://a:5672', code: 'ECONNREFUSED' },
      { url: 'amqp://b:5672', code: 'ENOTFOUND' },
    ];
    expect(noBrokerMessage(refusals, 0)).toBe('no broker: amqp://a:5672: connection refused (ECONNREFUSED); amqp://b:5672: host not found (ENOTFOUND)');
  });
});

describe('connectAny: the first connection fails fast when no broker is there', () => {
  beforeEach(() => {
    amqpConnect.mockReset();
  });

  it('every URL refused, no wait: NoBrokerError after one round, no sleep; exit 68; the password masked; the hint names cluster up', async () => {
    amqpConnect.mockRejectedValue(socketError('ECONNREFUSED'));
    const clock = fakeClock();
    const wait: BrokerWait = { waitMs: 0, reached: false };
    const err = await rejection(connectAny(URLS, 0, { heartbeatS: 5, timeoutMs: 60_000, clock, brokerWait: wait }));
    expect(err).toBeInstanceOf(NoBrokerError);
    expect(err).toBeInstanceOf(BrokerUnavailableError);
    expect((err as NoBrokerError).exitCode).toBe(ExitCode.brokerUnavailable);
    expect((err as NoBrokerError).message).toBe(
      'no broker at amqp://demo:***@127.0.0.1:1, amqp://demo:***@127.0.0.1:2, amqp://demo:***@127.0.0.1:3: connection refused (ECONNREFUSED)',
    );
    expect((err as NoBrokerError).hint).toBe(NO_BROKER_HINT);
    expect(NO_BROKER_HINT).toContain("'rmq-bench cluster up'");
    expect(amqpConnect).toHaveBeenCalledTimes(3);
    expect(clock.slept).toEqual([]);
    expect(wait.reached).toBe(false);
  });

  it('with a wait: rounds with backoff until the wait is over, then NoBrokerError', async () => {
    amqpConnect.mockRejectedValue(socketError('ECONNREFUSED'));
    const clock = fakeClock();
    const err = await rejection(connectAny(URLS, 0, { heartbeatS: 5, timeoutMs: 60_000, clock, brokerWait: { waitMs: 3_000, reached: false } }));
    expect(err).toBeInstanceOf(NoBrokerError);
    expect((err as Error).message).toContain('after waiting 3s: connection refused');
    expect(clock.slept).toEqual([100, 200, 400, 800, 1_500]);
    expect(clock.now()).toBe(3_000);
  });

  it('a broker that comes up during the wait: connected, and marked reached', async () => {
    const connection = { on: vi.fn() };
    amqpConnect.mockRejectedValueOnce(socketError('ECONNREFUSED')).mockResolvedValueOnce(connection);
    const wait: BrokerWait = { waitMs: 3_000, reached: false };
    const c = await connectAny(['amqp://demo:demo@127.0.0.1:1'], 0, { heartbeatS: 5, timeoutMs: 60_000, clock: fakeClock(), brokerWait: wait });
    expect(c.connection).toBe(connection);
    expect(wait.reached).toBe(true);
  });

  it('after a first connection: refused is retried until the deadline of the caller (BrokerUnavailableError, not NoBrokerError)', async () => {
    amqpConnect.mockRejectedValue(socketError('ECONNREFUSED'));
    const clock = fakeClock();
    const err = await rejection(connectAny(URLS, 0, { heartbeatS: 5, timeoutMs: 1_000, clock, brokerWait: { waitMs: 0, reached: true } }));
    expect(err).toBeInstanceOf(BrokerUnavailableError);
    expect(err).not.toBeInstanceOf(NoBrokerError);
    expect((err as Error).message).toMatch(/^no broker answered within 1000 ms \(amqp:\/\/demo:\*\*\*@127\.0\.0\.1:1: connect ECONNREFUSED/);
    expect(clock.slept).toEqual([100, 200, 400, 300]);
  });

  it('first connection, one URL refused and one that times out: not "no broker"; the deadline of the caller applies', async () => {
    amqpConnect.mockImplementation(async (url) => {
      throw url.includes(':1?') ? socketError('ECONNREFUSED') : socketError('ETIMEDOUT', 'connect ETIMEDOUT');
    });
    const clock = fakeClock();
    const err = await rejection(connectAny(URLS.slice(0, 2), 0, { heartbeatS: 5, timeoutMs: 1_000, clock, brokerWait: { waitMs: 0, reached: false } }));
    expect(err).not.toBeInstanceOf(NoBrokerError);
    expect((err as Error).message).toMatch(/^no broker answered within 1000 ms/);
  });
});

describe('--wait-for-broker and RMQ_BENCH_WAIT_FOR_BROKER', () => {
  captureOutput();

  it.each([
    [['producer', '--wait-for-broker', '3s'], 3_000],
    [['consumer', '--wait-for-broker', '1m'], 60_000],
    [['bench', '--wait-for-broker', '0'], 0],
    [['dlq', 'inspect', '--wait-for-broker', '500ms'], 500],
    [['dlq', 'replay', '--wait-for-broker', '2s'], 2_000],
    [['verify', '--ledger', 'r.json', '--wait-for-broker', '2s'], 2_000],
  ])('%j: waitForBrokerMs %d', async (args, ms) => {
    expect((await invocationOf(args)).waitForBrokerMs).toBe(ms);
  });

  it('not given: no waitForBrokerMs (main.ts uses the variable, else 0)', async () => {
    expect(await invocationOf(['producer'])).not.toHaveProperty('waitForBrokerMs');
  });

  it('a bare number is refused (a duration takes a unit)', async () => {
    const { err, calls } = await parse(['producer', '--wait-for-broker', '5']);
    expect(calls).toEqual([]);
    expect(err).toBeDefined();
  });

  it('a command that checks the cluster first (management API) does not take it', async () => {
    const { err, calls } = await parse(['compare', '--wait-for-broker', '5s']);
    expect(calls).toEqual([]);
    expect(err).toBeDefined();
  });

  it.each([
    [undefined, 0],
    ['', 0],
    ['30s', 30_000],
    ['0', 0],
  ])('RMQ_BENCH_WAIT_FOR_BROKER=%j: %d ms', (value, ms) => {
    expect(loadConfig(value === undefined ? {} : { RMQ_BENCH_WAIT_FOR_BROKER: value }).waitForBrokerMs).toBe(ms);
  });

  it.each(['5', 'soon'])('RMQ_BENCH_WAIT_FOR_BROKER=%s: a usage error naming the variable', (value) => {
    expect(() => loadConfig({ RMQ_BENCH_WAIT_FOR_BROKER: value })).toThrow(UsageError);
    expect(() => loadConfig({ RMQ_BENCH_WAIT_FOR_BROKER: value })).toThrow(`RMQ_BENCH_WAIT_FOR_BROKER=${value}: `);
  });
});
