import type amqp from 'amqplib';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, parseJson, runCli, uniqueName, withChannel, type CliResult as CliJson, AMQP_URLS, CONTAINERS } from './cli.js';
import { WORKSHOP_TIMEOUT_MS, workshopDoc, workshopOutcome } from './workshop-run.js';
import { witnessAt } from './witness.js';

interface DeliveryJson {
  messageId?: string;
  deliveryCount?: number;
  acquiredCount?: number;
  redelivered: boolean;
  outcome: string;
}
interface ConsumerJson {
  received: number;
  processed: number;
  duplicatesSkipped: number;
  crashes: number;
  deliveries: DeliveryJson[];
  stoppedBecause: string;
}

const created: string[] = [];
let dir: string;

/** A quorum queue of its own, dead-lettering into a queue of its own (not demo.dlx, which loops back via demo.retry). */
async function queuePair(prefix: string): Promise<{ queue: string; dlq: string }> {
  const queue = uniqueName(prefix);
  const dlq = `${queue}.dlq`;
  await withChannel(async (ch) => {
    await ch.assertQueue(dlq, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await ch.assertQueue(queue, {
      durable: true,
      arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 5, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dlq },
    });
  });
  created.push(queue, dlq);
  return { queue, dlq };
}

async function publish(queue: string, ids: string[]): Promise<void> {
  await withChannel(async (ch) => {
    for (const id of ids) ch.sendToQueue(queue, Buffer.from(id), { messageId: id, persistent: true });
    await ch.waitForConfirms();
  });
}

describe('consumer semantics on RabbitMQ 4.3 quorum queues', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-it-'));
  });
  afterAll(async () => {
    await withChannel(async (ch) => {
      for (const q of created) await ch.deleteQueue(q);
    }).catch(() => undefined);
  });

  it('--nack on 3 messages: each is delivered 6 times (#1 to #6), then leaves the queue for its DLQ', async () => {
    const { queue, dlq } = await queuePair('nack');
    const ids = ['m-1', 'm-2', 'm-3'];
    await publish(queue, ids);
    const r = await runCli(['consumer', '--queue', queue, '--nack', '--idle-timeout', '3s', '--json'], { env: { RMQ_BENCH_QUIET: '0' } });
    expect(r.exitCode, r.stderr).toBe(0);
    const c = parseJson<ConsumerJson>(r);
    expect(c.crashes).toBe(18);
    for (const id of ids) {
      const counts = c.deliveries.filter((d) => d.messageId === id).map((d) => d.deliveryCount ?? 0);
      expect(counts).toEqual([0, 1, 2, 3, 4, 5]);
    }
    expect(r.stderr).toContain('delivery #6 of m-1');
    const inQueue = await withChannel((ch) => ch.checkQueue(queue));
    expect(inQueue.messageCount).toBe(0);
    const dead = await withChannel(async (ch) => {
      const got: amqp.GetMessage[] = [];
      for (let i = 0; i < 20 && got.length < 3; i++) {
        const m = await ch.get(dlq, { noAck: true });
        if (m) got.push(m);
        else await new Promise((res) => setTimeout(res, 200));
      }
      return got;
    });
    expect(dead.map((m) => m.properties.messageId).sort()).toEqual(ids);
    for (const m of dead) expect(m.properties.headers?.['x-first-death-reason']).toBe('delivery_limit');
  });

  it('nack with requeue=true does not raise x-delivery-count; reject with requeue=true does', async () => {
    const counts: Record<string, (number | undefined)[]> = {};
    for (const action of ['nack-requeue', 'reject-requeue'] as const) {
      const { queue } = await queuePair(action);
      await publish(queue, ['only']);
      const r = await runCli(['consumer', '--queue', queue, '--on-failure', action, '--fail-first', '3', '-n', '1', '--idle-timeout', '3s', '--json']);
      expect(r.exitCode, r.stderr).toBe(0);
      const c = parseJson<ConsumerJson>(r);
      expect(c.deliveries.map((d) => d.outcome)).toEqual([action, action, action, 'processed']);
      counts[action] = c.deliveries.map((d) => d.deliveryCount);
      // Every delivery after the first is an acquisition again, either way.
      expect(c.deliveries.slice(1).every((d) => d.redelivered)).toBe(true);
    }
    expect(counts['nack-requeue']).toEqual([undefined, undefined, undefined, undefined]);
    expect(counts['reject-requeue']).toEqual([undefined, 1, 2, 3]);
  });

  it('--idempotent: redelivered duplicates are recognised, each message is processed exactly once', async () => {
    const { queue } = await queuePair('idem');
    const ids = Array.from({ length: 20 }, (_, i) => `dup-${i}`);
    await publish(queue, ids);
    await publish(queue, ids); // at-least-once: the same ids again
    const store = path.join(dir, 'idem.sqlite');
    const r = await runCli(['consumer', '--queue', queue, '--idempotent', '--store', store, '--idle-timeout', '2s', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const c = parseJson<ConsumerJson>(r);
    expect(c.received).toBe(40);
    expect(c.processed).toBe(20);
    expect(c.duplicatesSkipped).toBe(20);
    // A second consumer on the same store skips them again: the record is durable.
    await publish(queue, ids.slice(0, 5));
    const again = parseJson<ConsumerJson>(await runCli(['consumer', '--queue', queue, '--idempotent', '--store', store, '--idle-timeout', '2s', '--json']));
    expect(again.processed).toBe(0);
    expect(again.duplicatesSkipped).toBe(5);
  });

  it('bad input: an unknown queue (exit 66) and --nack with --autoack (exit 2), one line each', async () => {
    const r = await runCli(['consumer', '--queue', 'no.such.queue.here', '--idle-timeout', '1s']);
    expect(r.exitCode).toBe(66);
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('rmq-bench:')),
    ).toHaveLength(1);
    expect(r.stderr).toContain("queue 'no.such.queue.here' does not exist");
    const u = await runCli(['consumer', '--nack', '--autoack']);
    expect(u.exitCode).toBe(2);
    expect(u.stderr.trim().split('\n')).toHaveLength(1);
  });
});

// consumer-crash and prefetch-demo with their defaults are the workshop's steps 4 and 5: their runs are checked here.
describe("consumer-crash: SIGKILL mid-run (the workshop's run)", { timeout: WORKSHOP_TIMEOUT_MS }, () => {
  it('manual ack loses nothing; autoack loses what was delivered but not processed, none of it left in the queue; the idempotent store processes each once', async () => {
    const o = await workshopOutcome('consumer-crash');
    const c = await workshopDoc<{
      ok: boolean;
      options: { count: number };
      runs: {
        mode: string;
        published: number;
        confirmed: number;
        processed: number;
        lost: number;
        processedTwice: number;
        duplicatesSkipped: number;
        processedBeforeKill: number;
        unexpected: number;
      }[];
    }>('consumer-crash');
    expect(c.ok).toBe(true);
    const n = c.options.count;
    expect(n).toBe(2000);
    const by = Object.fromEntries(c.runs.map((x) => [x.mode, x]));
    expect(Object.keys(by).sort()).toEqual(['autoack', 'idempotent', 'manual']);
    for (const x of c.runs) {
      // The broker's own count (the tests' witness): the queue held every message before the
      // first consumer, and nothing after the last one. So whatever was not processed was taken
      // from the queue by a consumer, not left in it.
      expect(witnessAt(o.witness!, 'before-consume', x.mode, 'demo.orders').messages, x.mode).toBe(n);
      expect(witnessAt(o.witness!, 'after-consume', x.mode, 'demo.orders').messages, x.mode).toBe(0);
      expect(x.published).toBe(n);
      expect(x.confirmed).toBe(n);
      expect(x.unexpected).toBe(0);
      expect(x.processedBeforeKill).toBeGreaterThan(0);
    }
    expect(by.manual!.lost).toBe(0);
    expect(by.manual!.processed).toBe(n);
    expect(by.idempotent!.lost).toBe(0);
    expect(by.idempotent!.processed).toBe(n);
    expect(by.idempotent!.processedTwice).toBe(0);
    // Autoack: the broker pushed the rest of the queue to the consumer it considered done with
    // them; the kill took them along. At least what it held beyond what it had processed.
    expect(by.autoack!.lost).toBeGreaterThan(0);
    expect(by.autoack!.processed).toBeGreaterThanOrEqual(by.autoack!.processedBeforeKill);
    expect(by.autoack!.processed).toBeLessThan(n);
  });
});

describe("prefetch-demo (the workshop's run)", { timeout: WORKSHOP_TIMEOUT_MS }, () => {
  it('an unlimited prefetch lets the slow consumer hoard the queue; prefetch 1 gives most to the fast one', async () => {
    const d = await workshopDoc<{
      options: { count: number };
      rows: { prefetch: number; fastProcessed: number; slowProcessed: number; fastMaxHeld: number; slowMaxHeld: number }[];
    }>('prefetch-demo');
    const n = d.options.count;
    const one = d.rows.find((x) => x.prefetch === 1)!;
    const unlimited = d.rows.find((x) => x.prefetch === 0)!;
    for (const x of d.rows) expect(x.fastProcessed + x.slowProcessed).toBe(n);
    expect(one.slowProcessed).toBeLessThan(one.fastProcessed);
    expect(unlimited.slowProcessed).toBeGreaterThan(one.slowProcessed);
    expect(one.fastMaxHeld).toBeLessThanOrEqual(1);
    expect(one.slowMaxHeld).toBeLessThanOrEqual(1);
    expect(unlimited.slowMaxHeld).toBeGreaterThan(10);
  });
});

describe('consumer under interruption and node failure', { timeout: 300_000 }, () => {
  const queue = uniqueName('resilience');
  beforeAll(async () => {
    dir ??= await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-it-'));
    await withChannel((ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
    created.push(queue);
  });

  it('Ctrl+C with manual ack: exit 130, and every message is either processed or back in the queue', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `int-${i}`);
    await publish(queue, ids);
    const { execa } = await import('execa');
    const { ROOT } = await import('./cli.js');
    const child = execa('node', [path.join(ROOT, 'bin', 'rmq-bench.js'), 'consumer', '--queue', queue, '--work', '50ms', '--prefetch', '20', '--json'], {
      cwd: ROOT,
      reject: false,
      stdin: 'ignore',
      env: { RMQ_BENCH_QUIET: '1' },
    });
    // Interrupt mid-way: once at least 40 have left the queue (prefetch 20, so at least 20 are acked).
    await eventually(async () => expect((await withChannel((ch) => ch.checkQueue(queue))).messageCount).toBeLessThanOrEqual(60), 30_000, 100);
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(130);
    const c = parseJson<ConsumerJson>({ exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) });
    expect(c.stoppedBecause).toBe('interrupted');
    expect(c.processed).toBeGreaterThan(0);
    expect(c.processed).toBeLessThan(100);
    const left = await withChannel((ch) => ch.checkQueue(queue));
    expect(left.messageCount + c.processed).toBe(100);
    await withChannel((ch) => ch.purgeQueue(queue));
  });

  it('re-subscribes through another node when the one it is connected to is killed, and loses nothing', async () => {
    const ids = Array.from({ length: 400 }, (_, i) => `node-${i}`);
    await publish(queue, ids);
    const store = path.join(dir, 'resilience.sqlite');
    const urls = AMQP_URLS.join(',');
    const args = ['consumer', '--queue', queue, '--urls', urls, '--work', '10ms', '--store', store, '--idle-timeout', '4s', '--heartbeat', '2s', '--json'];
    const pending = runCli(args);
    // Kill the node once the consumer is under way (it has taken messages), not after a guessed sleep.
    await eventually(async () => expect((await withChannel((ch) => ch.checkQueue(queue))).messageCount).toBeLessThanOrEqual(350), 30_000, 100);
    const { default: Docker } = await import('dockerode');
    await new Docker().getContainer(CONTAINERS[0]!).kill({ signal: 'SIGKILL' });
    let first: CliJson;
    try {
      first = await pending;
    } finally {
      // The node comes back. Until it does (or consumer_disconnected_timeout, 60 s, passes),
      // RabbitMQ 4.x keeps the deliveries that were checked out to the dead node's consumer.
      const up = await runCli(['cluster', 'up']);
      expect(up.exitCode, up.stderr).toBe(0);
    }
    expect(first.exitCode, first.stderr).toBe(0);
    expect(parseJson<ConsumerJson & { reconnects: number }>(first).reconnects).toBeGreaterThanOrEqual(1);
    const second = await runCli(args);
    expect(second.exitCode, second.stderr).toBe(0);
    // The store read with this test's own SQL, not src/store's: every id has a processing entry.
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(store, { readonly: true });
    let logged: Set<string>;
    try {
      logged = new Set((db.prepare('SELECT DISTINCT message_id FROM processing_log').all() as { message_id: string }[]).map((r) => r.message_id));
    } finally {
      db.close();
    }
    expect(ids.filter((id) => !logged.has(id))).toEqual([]);
    expect([...logged].filter((id) => !ids.includes(id))).toEqual([]);
    expect((await withChannel((ch) => ch.checkQueue(queue))).messageCount).toBe(0);
  });
});
