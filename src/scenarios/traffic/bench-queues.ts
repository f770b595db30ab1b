import type { Channel } from 'amqplib';
import { closeWithin, connectAny } from '../../client/amqp091/connect.js';
import { shortNodeName } from '../../cluster/broker/queue-leadership.js';
import { currentLeader } from '../../cluster/broker/queue-leader-lookup.js';
import type { Context } from '../../context.js';
import { AmqpError, RmqBenchError, errorMessage } from '../../errors.js';
import { retryUntil } from '../../util/retry.js';

/**
 * bench's queues of one run, the part that talks to the broker: declared with their leaders
 * spread over the nodes, awaited until every member is online, their leaders looked up, deleted.
 */

/** What these need of bench's options. */
interface QueueSettings {
  heartbeatS: number;
  reconnectTimeoutMs: number;
}

/** How long the members of a fresh queue may take to come online. */
const MEMBERS_ONLINE_TIMEOUT_MS = 30_000;

/** amqplib's own errors (a channel or connection closed under us) as AmqpError, with its code; ours as they are. */
export function asAmqpError(what: string, err: unknown): unknown {
  if (err instanceof RmqBenchError) return err;
  const e = err as { code?: unknown; classId?: unknown };
  return new AmqpError(
    `${what}: ${errorMessage(err)}`,
    typeof e.code === 'number' ? e.code : undefined,
    typeof e.classId === 'number' ? e.classId : undefined,
    { cause: err },
  );
}

/** The vhost an AMQP URL names ('/' when its path is empty), as the management API spells it. */
export function vhostOf(url: string): string {
  const path = new URL(url).pathname;
  return path === '' || path === '/' ? '/' : decodeURIComponent(path.slice(1));
}

/** The URLs with url[start] first: a client that should land on node `start` tries it first, then the others in order. */
export function urlsFrom(urls: readonly string[], start: number): string[] {
  const i = start % urls.length;
  return [...urls.slice(i), ...urls.slice(0, i)];
}

/**
 * Fresh quorum queues, queue i declared through a connection to URL i (mod their count) with the
 * client-local leader locator, so that their leaders start spread over the nodes (a node that
 * does not answer: the next URL's). Each name is added to `declared` once it exists, so that the
 * caller deletes exactly those.
 */
export async function declareSpread(ctx: Context, opts: QueueSettings, urls: readonly string[], names: readonly string[], declared: string[]): Promise<void> {
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    try {
      const c = await connectAny(urls, i % urls.length, {
        heartbeatS: opts.heartbeatS,
        timeoutMs: opts.reconnectTimeoutMs,
        signal: ctx.signal,
        connectionName: 'rmq-bench bench (queues)',
      });
      c.connection.on('error', () => undefined);
      try {
        const ch = await c.connection.createChannel();
        ch.on('error', () => undefined);
        await ch.assertQueue(name, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-queue-leader-locator': 'client-local' } });
        declared.push(name);
      } finally {
        await closeWithin(c.connection);
      }
    } catch (err) {
      throw asAmqpError(`could not declare queue ${name}`, err);
    }
  }
}

/**
 * Each queue's leader (its node's short name) once every member is online, waited for up to 30 s
 * per queue. Without a management API that knows the queues (--urls to another cluster), one line
 * says so and every leader is null: the run goes on without waiting.
 */
export async function awaitMembers(ctx: Context, vhost: string, names: readonly string[]): Promise<(string | null)[]> {
  try {
    await ctx.management.queue(vhost, names[0]!);
  } catch (err) {
    ctx.log(`leaders unknown: the management API did not report queue ${names[0]} (${errorMessage(err)}); not waiting for its members`);
    return names.map(() => null);
  }
  const leaders: (string | null)[] = [];
  for (const queue of names) {
    const q = await retryUntil(
      () => currentLeader(ctx, { vhost, queue }),
      (l) => l.members.length > 0 && l.online.length >= l.members.length,
      {
        timeoutMs: MEMBERS_ONLINE_TIMEOUT_MS,
        intervalMs: 200,
        signal: ctx.signal,
        describe: (l) =>
          `queue '${queue}' not ready after ${MEMBERS_ONLINE_TIMEOUT_MS} ms (${l.value ? `${l.value.online.length} of ${l.value.members.length} members online` : errorMessage(l.error)})`,
      },
    );
    leaders.push(shortNodeName(q.leader));
  }
  return leaders;
}

/**
 * The queues deleted over one connection to whichever node answers first; runs on Ctrl+C too (no
 * signal). A queue that could not be deleted is one line on stderr, not an error: the figures stand.
 */
export async function deleteSpread(ctx: Context, opts: QueueSettings, urls: readonly string[], names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  let left = [...names];
  try {
    const c = await connectAny(urls, 0, { heartbeatS: opts.heartbeatS, timeoutMs: opts.reconnectTimeoutMs, connectionName: 'rmq-bench bench (queues)' });
    c.connection.on('error', () => undefined);
    try {
      const ch: Channel = await c.connection.createChannel();
      ch.on('error', () => undefined);
      for (const name of names) {
        await ch.deleteQueue(name);
        left = left.filter((n) => n !== name);
      }
    } finally {
      await closeWithin(c.connection);
    }
  } catch (err) {
    ctx.log(
      `could not delete queue${left.length === 1 ? '' : 's'} ${left.join(', ')}: ${errorMessage(err)} (delete ${left.length === 1 ? 'it' : 'them'} in the management UI)`,
    );
  }
}
