import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { closeWithin, connectAny } from '../../client/amqp091/connect.js';
import { requireCluster, waitForHealthyAndClustered } from '../../cluster/lifecycle/readiness.js';
import type { Docker } from '../../cluster/docker/engine.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { InterruptedError, errorMessage } from '../../errors.js';
import { retryUntil, systemClock } from '../../util/retry.js';
import type { RestartHow } from './restart-how.js';

/**
 * durability-demo: transient and persistent messages in a durable classic queue and in a
 * quorum queue, then every node restarted (stopped or killed, then started), then what
 * survived counted. The article says: a quorum queue keeps both; a classic queue loses the
 * transient ones. The demo reports what the broker actually did and checks the claim.
 * Returns data; never prints.
 */

export interface DurabilityDemoOptions {
  /** Messages of each delivery mode, per queue. */
  count: number;
  how: RestartHow;
  restartTimeoutMs: number;
  /**
   * How long the new queues exist before the messages are published. Measured on 4.3.6: a
   * quorum queue declared a moment before every node is killed can come back empty even though
   * its messages were confirmed; 10 s later it keeps them.
   */
  queueAgeMs: number;
}

export interface DurabilityRow {
  queue: string;
  queueType: 'classic' | 'quorum';
  deliveryMode: 'transient' | 'persistent';
  published: number;
  confirmed: number;
  survived: number;
  /** What the article claims survives. */
  expected: number;
  ok: boolean;
}

export interface DurabilityDemoResult {
  how: RestartHow;
  /** The node holding the classic queue (it has no replicas). */
  classicNode: string | null;
  restartMs: number;
  queueAgeMs: number;
  rows: DurabilityRow[];
  ok: boolean;
  problems: string[];
}

export const CLASSIC_QUEUE = 'demo.durability.classic';
export const QUORUM_QUEUE = 'demo.durability.quorum';

/** The article's claim: a quorum queue keeps every confirmed message; a classic queue keeps only persistent ones. Pure. */
export function expectedSurvivors(queueType: 'classic' | 'quorum', deliveryMode: 'transient' | 'persistent', confirmed: number): number {
  return queueType === 'classic' && deliveryMode === 'transient' ? 0 : confirmed;
}

type Step = (title: string) => Promise<void>;

async function publishAll(ch: ConfirmChannel, queue: string, count: number, persistent: boolean): Promise<number> {
  const kind = persistent ? 'persistent' : 'transient';
  let confirmed = 0;
  const pending: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    pending.push(
      new Promise<void>((resolve) => {
        ch.sendToQueue(queue, Buffer.from(`${kind} ${i}`), { messageId: `${queue}-${kind}-${i}`, persistent, headers: { 'x-rmq-bench-kind': kind } }, (err) => {
          if (!err) confirmed++;
          resolve();
        });
      }),
    );
  }
  await Promise.all(pending);
  return confirmed;
}

/**
 * Count what the queue holds, by kind; a fresh channel each call (a failed get closes it). Every
 * message is taken without an ack and goes back when the channel closes: a count cut short by a
 * channel the broker closes (a queue still recovering after the restart) loses nothing, and the
 * next call counts every message again.
 */
async function countByKind(connection: ChannelModel, queue: string): Promise<{ transient: number; persistent: number }> {
  const ch = await connection.createChannel();
  ch.on('error', () => undefined);
  const out = { transient: 0, persistent: 0 };
  try {
    for (;;) {
      const m = await ch.get(queue, { noAck: false });
      if (!m) break;
      const kind = m.properties.headers?.['x-rmq-bench-kind'];
      if (kind === 'transient') out.transient++;
      else if (kind === 'persistent') out.persistent++;
    }
  } finally {
    await ch.close().catch(() => undefined);
  }
  return out;
}

/** Delete a queue on a channel of its own, closed after (a failed delete closes it). */
async function deleteQueue(connection: ChannelModel, queue: string): Promise<void> {
  const ch = await connection.createChannel();
  ch.on('error', () => undefined);
  try {
    await ch.deleteQueue(queue);
  } finally {
    await ch.close().catch(() => undefined);
  }
}

export async function runDurabilityDemo(ctx: Context, o: DurabilityDemoOptions, step: Step): Promise<DurabilityDemoResult> {
  await requireCluster(ctx);
  const { config } = ctx;
  const urls = config.nodes.map((n) => amqpUrl(config, n));
  const problems: string[] = [];
  const docker = await ctx.docker();
  const { published, classicNode } = await setUpAndPublish(ctx, o, urls, step);

  if (ctx.signal.aborted) throw new InterruptedError();
  await step(
    `restart every node: ${o.how === 'stop' ? 'docker stop (SIGTERM: RabbitMQ shuts down cleanly)' : 'docker kill (SIGKILL: a crash)'}, all three, then start them again`,
  );
  const restartMs = await restartEveryNode(ctx, o, docker, problems);

  await step('count what survived in each queue');
  const rows = await countSurvivors(ctx, o, urls, published, problems);
  for (const r of rows)
    if (r.confirmed !== r.published)
      problems.push(`${r.queueType} queue, ${r.deliveryMode}: only ${r.confirmed} of ${r.published} confirmed before the restart`);
  return { how: o.how, classicNode, restartMs, queueAgeMs: o.queueAgeMs, rows, ok: problems.length === 0, problems };
}

/** Confirmed messages per queue and delivery mode. */
type Published = Record<string, { transient: number; persistent: number }>;

/** Both queues new and empty, left to settle for --queue-age, then both kinds of messages published to each with confirms. */
async function setUpAndPublish(
  ctx: Context,
  o: DurabilityDemoOptions,
  urls: string[],
  step: Step,
): Promise<{ published: Published; classicNode: string | null }> {
  // Publish through rabbit1: the classic queue is declared there and lives there.
  const c = await connectAny(urls, 0, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal, connectionName: 'rmq-bench durability-demo' });
  c.connection.on('error', () => undefined);
  const published: Published = {};
  try {
    const ch = await c.connection.createConfirmChannel();
    ch.on('error', () => undefined);
    await step(`setup: a durable classic queue ${CLASSIC_QUEUE} and a quorum queue ${QUORUM_QUEUE}, both new and empty`);
    for (const q of [CLASSIC_QUEUE, QUORUM_QUEUE]) await ch.deleteQueue(q);
    await ch.assertQueue(CLASSIC_QUEUE, { durable: true, arguments: { 'x-queue-type': 'classic' } });
    await ch.assertQueue(QUORUM_QUEUE, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    const info = (await ctx.management.get(`/api/queues/${encodeURIComponent(ctx.config.vhost)}/${CLASSIC_QUEUE}`)) as { node?: string };
    const classicNode = info.node ?? null;
    if (o.queueAgeMs > 0) {
      ctx.progress.start(`letting the new queues settle for ${(o.queueAgeMs / 1000).toFixed(1)} s (--queue-age)`);
      await systemClock.sleep(o.queueAgeMs, ctx.signal);
      ctx.progress.stop();
    }
    await step(`publish ${o.count} transient (delivery mode 1) and ${o.count} persistent (delivery mode 2) messages to each, with confirms`);
    for (const q of [CLASSIC_QUEUE, QUORUM_QUEUE]) {
      published[q] = { transient: await publishAll(ch, q, o.count, false), persistent: await publishAll(ch, q, o.count, true) };
    }
    return { published, classicNode };
  } finally {
    await closeWithin(c.connection);
  }
}

/** Every node stopped or killed, started again whatever happened, and waited for; returns how long that took (ms). */
async function restartEveryNode(ctx: Context, o: DurabilityDemoOptions, docker: Docker, problems: string[]): Promise<number> {
  const started = performance.now();
  const containers = ctx.config.nodes.map((n) => docker.getContainer(n.container));
  try {
    await Promise.all(
      containers.map((ct) =>
        (o.how === 'stop' ? ct.stop({ t: 60 }) : ct.kill({ signal: 'SIGKILL' })).catch((err: unknown) =>
          problems.push(`could not ${o.how} a node: ${errorMessage(err)}`),
        ),
      ),
    );
  } finally {
    // Whatever happened, the nodes are started again.
    await Promise.all(containers.map((ct) => ct.start().catch(() => undefined)));
  }
  ctx.progress.start('waiting for the nodes to come back');
  await waitForHealthyAndClustered(ctx, { timeoutMs: o.restartTimeoutMs });
  const restartMs = performance.now() - started;
  ctx.progress.succeed(`all nodes back in ${(restartMs / 1000).toFixed(1)} s`);
  return restartMs;
}

/** What each queue holds after the restart, by delivery mode, against the article's claim; then both queues deleted. */
async function countSurvivors(ctx: Context, o: DurabilityDemoOptions, urls: string[], published: Published, problems: string[]): Promise<DurabilityRow[]> {
  const c = await retryUntil(
    () => connectAny(urls, 0, { heartbeatS: 5, timeoutMs: 10_000, signal: ctx.signal, connectionName: 'rmq-bench durability-demo count' }),
    () => true,
    {
      timeoutMs: 60_000,
      intervalMs: 1_000,
      signal: ctx.signal,
      describe: (last) => `no node accepted a connection after the restart (${errorMessage(last.error)})`,
    },
  );
  c.connection.on('error', () => undefined);
  const rows: DurabilityRow[] = [];
  try {
    for (const [queue, queueType] of [
      [CLASSIC_QUEUE, 'classic'],
      [QUORUM_QUEUE, 'quorum'],
    ] as const) {
      // The queue may need a moment after the nodes report running (a quorum leader election, a classic queue's recovery).
      const survived = await retryUntil(
        () => countByKind(c.connection, queue),
        () => true,
        {
          timeoutMs: 60_000,
          intervalMs: 1_000,
          signal: ctx.signal,
          describe: (last) => `${queue} did not answer after the restart (${errorMessage(last.error)})`,
        },
      );
      for (const deliveryMode of ['transient', 'persistent'] as const) {
        const confirmed = published[queue]![deliveryMode];
        const expected = expectedSurvivors(queueType, deliveryMode, confirmed);
        const got = survived[deliveryMode];
        const ok = got === expected;
        if (!ok) problems.push(`${queueType} queue, ${deliveryMode}: ${got} of ${confirmed} survived; the article says ${expected}`);
        rows.push({ queue, queueType, deliveryMode, published: o.count, confirmed, survived: got, expected, ok });
      }
    }
    for (const q of [CLASSIC_QUEUE, QUORUM_QUEUE])
      await retryUntil(
        () => deleteQueue(c.connection, q),
        () => true,
        {
          timeoutMs: 60_000,
          intervalMs: 1_000,
          signal: ctx.signal,
          describe: (last) => `could not delete ${q} after the restart (${errorMessage(last.error)})`,
        },
      );
  } finally {
    await closeWithin(c.connection);
  }
  return rows;
}
