import { BrokerUnavailableError, InterruptedError, NoBrokerError, UsageError, errorMessage } from '../errors.js';
import { maskUrl } from '../url.js';
import { formatDuration } from '../util/duration.js';
import { systemClock, type Clock } from '../util/retry.js';

/**
 * Connecting to the first of several brokers that answers, whatever the protocol: the URL list,
 * the rounds over it with backoff and a deadline, and the wait for a broker before the first
 * connection. A protocol's client brings its dial (amqp091/connect.ts, amqp10/connection.ts).
 */

export interface ConnectOptions {
  /** Heartbeat in seconds, so that a half-open connection is noticed (0 disables). */
  heartbeatS: number;
  /** Overall deadline across every URL and retry. */
  timeoutMs: number;
  /** Per attempt (TCP + AMQP handshake). */
  attemptTimeoutMs?: number;
  signal?: AbortSignal | undefined;
  clock?: Clock;
  /** client_properties.connection_name, as the management API lists it. */
  connectionName?: string;
  /** Called before each wait between rounds (for progress). */
  onRetry?: (info: { attempt: number; delayMs: number; error: string }) => void;
  /** The first connection's wait for a broker (default: this process's, brokerWait). */
  brokerWait?: BrokerWait;
}

/** Check and normalise a comma-separated URL list once, at the edge. */
export function parseUrls(text: string): string[] {
  const urls = text
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  if (urls.length === 0) throw new UsageError('--urls: no URL given');
  urls.forEach((u, i) => {
    // Never quote the entry: a malformed URL's password cannot be found to be masked.
    const which = urls.length > 1 ? `entry ${i + 1}` : 'the URL';
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw new UsageError(`--urls: ${which} is not a URL (example: amqp://demo:demo@127.0.0.1:5672)`);
    }
    if (parsed.protocol !== 'amqp:' && parsed.protocol !== 'amqps:') {
      throw new UsageError(`--urls: ${which} is not an amqp:// or amqps:// URL`);
    }
    if (!u.toLowerCase().startsWith(`${parsed.protocol}//`) || parsed.hostname === '') {
      throw new UsageError(`--urls: ${which} has no host (example: amqp://demo:demo@127.0.0.1:5672)`);
    }
  });
  return urls;
}

/** Backoff between full rounds over the URL list: 100 ms doubling, at most 2 s. Pure. */
export function backoffMs(round: number): number {
  return Math.min(2_000, 100 * 2 ** Math.max(0, round));
}

/**
 * The first connection of a run. Until one has succeeded, a round in which every URL is refused
 * or unreachable means that no broker is there (the cluster is not up, a wrong port): connectAnyWith
 * fails at once, or once the wait the user asked for has passed (--wait-for-broker,
 * RMQ_BENCH_WAIT_FOR_BROKER), instead of retrying until the caller's reconnect deadline. Once a
 * connection has succeeded, a failure is a fault to ride out: the caller's deadline applies.
 */
export interface BrokerWait {
  /** How long a first connection waits for a broker that refuses it; 0 fails at once. */
  waitMs: number;
  /** A connection has succeeded (in this process, for brokerWait). */
  reached: boolean;
}

/** This process's: main.ts sets waitMs for the command it runs; connectAnyWith marks it reached. */
export const brokerWait: BrokerWait = { waitMs: 0, reached: false };

/** Socket errors that say no broker is there (no listener, no route, no such host), as people read them. */
const NO_BROKER_CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EHOSTDOWN: 'host down',
  ENOTFOUND: 'host not found',
};

/** The error's code when it says no broker is there, else undefined (a timeout, a broker that answered and closed). Pure. */
export function noBrokerCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; errors?: unknown } | null | undefined;
  if (typeof e?.code === 'string' && Object.hasOwn(NO_BROKER_CAUSES, e.code)) return e.code;
  // A name with several addresses fails with an AggregateError, one error per address.
  if (Array.isArray(e?.errors) && e.errors.length > 0) {
    const codes = e.errors.map(noBrokerCode);
    if (codes.every((c) => c !== undefined)) return codes[0];
  }
  return undefined;
}

/** One URL of a round, refused: masked, and its socket error's code. */
interface Refusal {
  url: string;
  code: string;
}

/** The one line for no broker at any URL: the addresses (masked) and the cause, each URL's own when they differ. Pure. */
export function noBrokerMessage(refusals: readonly Refusal[], waitedMs: number): string {
  const cause = (code: string): string => `${NO_BROKER_CAUSES[code] ?? code} (${code})`;
  const waited = waitedMs > 0 ? ` after waiting ${formatDuration(waitedMs)}` : '';
  const codes = [...new Set(refusals.map((r) => r.code))];
  if (codes.length === 1) return `no broker at ${refusals.map((r) => r.url).join(', ')}${waited}: ${cause(codes[0]!)}`;
  return `no broker${waited}: ${refusals.map((r) => `${r.url}: ${cause(r.code)}`).join('; ')}`;
}

export const NO_BROKER_HINT = "is the cluster up? 'rmq-bench cluster up' starts it; --wait-for-broker 1m waits for one";

/** What connectAnyWith does after a round that connected nowhere. */
type NextRound = { kind: 'retry'; delayMs: number } | { kind: 'deadline'; deadlineMs: number } | { kind: 'no-broker' };

/**
 * After a round (0-based) that connected nowhere, elapsedMs into connectAnyWith: retry after a
 * delay, give up at the deadline, or (before the first connection, every URL refused, the wait
 * over) no broker. Before the first connection the wait also stretches the caller's deadline: a
 * broker that is starting refuses, then accepts and closes, until it is up. Pure.
 */
export function nextRound(r: { round: number; elapsedMs: number; timeoutMs: number; refused: boolean; wait: BrokerWait }): NextRound {
  const first = !r.wait.reached;
  if (first && r.refused && r.elapsedMs >= r.wait.waitMs) return { kind: 'no-broker' };
  const deadlineMs = first ? Math.max(r.timeoutMs, r.wait.waitMs) : r.timeoutMs;
  if (r.elapsedMs >= deadlineMs) return { kind: 'deadline', deadlineMs };
  // Refused: look again when the wait ends, not later.
  const untilMs = first && r.refused ? r.wait.waitMs : deadlineMs;
  return { kind: 'retry', delayMs: Math.min(backoffMs(r.round), untilMs - r.elapsedMs) };
}

/**
 * Connect to the first URL that answers, starting at `startIndex` and going round the list, with
 * backoff between rounds and an overall deadline; before the first connection of the run, no
 * broker at any URL fails at once (NoBrokerError; see BrokerWait). dial opens one connection to
 * one URL with a protocol's client library (connectAny: AMQP 0-9-1 with amqplib; connectAny10:
 * AMQP 1.0 with rhea) or throws its socket error.
 */
export async function connectAnyWith<T>(
  urls: readonly string[],
  startIndex: number,
  options: ConnectOptions,
  dial: (url: string) => Promise<T>,
): Promise<{ connection: T; url: string; index: number }> {
  const clock = options.clock ?? systemClock;
  const wait = options.brokerWait ?? brokerWait;
  const started = clock.now();
  const failures = new Map<string, string>();
  for (let round = 0; ; round++) {
    const refusals: Refusal[] = [];
    for (let i = 0; i < urls.length; i++) {
      if (options.signal?.aborted) throw new InterruptedError();
      const index = (startIndex + i) % urls.length;
      const url = urls[index]!;
      try {
        const connection = await dial(url);
        wait.reached = true;
        return { connection, url, index };
      } catch (err) {
        const code = noBrokerCode(err);
        // An AggregateError (a name with several addresses) may have no message: its code says it.
        failures.set(maskUrl(url), errorMessage(err) || (code ?? ''));
        if (code !== undefined) refusals.push({ url: maskUrl(url), code });
      }
    }
    const next = nextRound({
      round,
      elapsedMs: clock.now() - started,
      timeoutMs: options.timeoutMs,
      refused: urls.length > 0 && refusals.length === urls.length,
      wait,
    });
    if (next.kind === 'no-broker') throw new NoBrokerError(noBrokerMessage(refusals, wait.waitMs), { hint: NO_BROKER_HINT });
    if (next.kind === 'deadline') {
      const detail = [...failures].map(([u, e]) => `${u}: ${e}`).join('; ');
      throw new BrokerUnavailableError(`no broker answered within ${next.deadlineMs} ms (${detail})`, {
        hint: "is the cluster up? 'rmq-bench cluster up' starts it",
      });
    }
    options.onRetry?.({ attempt: round + 1, delayMs: next.delayMs, error: [...failures.values()].pop() ?? '' });
    await clock.sleep(next.delayMs, options.signal);
  }
}
