import Docker from 'dockerode';
import { execa } from 'execa';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AMQP_URLS, containerOf, eventually, mgmtGet, parseJson, ROOT, runCli, uniqueName, withChannel } from './cli.js';
import { expectClusterWhole, useQuorumQueue } from './fixtures.js';
import { newWitnessFile, witnessLines } from './witness.js';

/*
 * Several processes, one reconciliation: three `producer` processes side by side on one quorum
 * queue, its leader killed once by this test while they publish, then one `verify` of the folder
 * of their ledgers. Each process connects first to a different node (its --urls rotated), so the
 * kill takes one producer's connection with it as well as the queue's leader.
 */

const queue = uniqueName('verify-many');
const PRODUCERS = 3;
const COUNT = 3000;

interface ProducerJson {
  runId: string;
  count: number;
  confirmed: number;
  reconnects: number;
  completed: boolean;
}
interface Counts {
  attempted: number;
  confirmed: number;
  readDistinct: number;
  readTotal: number;
  unexpected: number;
}
interface Rec {
  counts: Counts;
  lost: number;
  silentlyLost: number;
  knownFailed: number;
  indeterminateUnread: number;
  neverWritten: number;
  recovered: number;
  duplicated: number;
  duplicateDeliveries: number;
  verdict: { ok: boolean; reasons: string[] };
}
interface VerifyJson {
  ok: boolean;
  queue: string;
  drain: { deliveries: number; complete: boolean; leftInQueue: number };
  reconciliation?: unknown;
  ledgers: { file: string; runId: string; queue: string; reconciliation: Rec }[];
  total: Omit<Rec, 'verdict'> & { ledgers: number; foreign: { count: number }; verdict: { ok: boolean; reasons: string[] } };
}

const rotated = (i: number): string => [...AMQP_URLS.slice(i), ...AMQP_URLS.slice(0, i)].join(',');

/** The broker's count of a queue, by the tests' own witness (queue-witness.mjs: plain amqplib, no code of rmq-bench), without a peek. */
async function brokerCount(q: string = queue): Promise<number> {
  const out = await newWitnessFile();
  const script = path.join(ROOT, 'test', 'integration', 'queue-witness.mjs');
  const w = await execa('node', [script, '--urls', AMQP_URLS.join(','), '--out', out, '--queue', q], { reject: false, timeout: 90_000 });
  expect(w.exitCode, w.stderr).toBe(0);
  const lines = witnessLines(out);
  expect(lines).toHaveLength(1);
  expect(lines[0]!.queue).toBe(q);
  expect(lines[0]!.ids).toBeNull();
  return lines[0]!.messages;
}

describe('verify: three producers, one queue, one reconciliation, under a leader kill', { timeout: 120_000 }, () => {
  useQuorumQueue(queue);

  it('per process 0 lost and every confirmed message read; the total is their sum and what the broker held', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-it-many-'));
    const files = Array.from({ length: PRODUCERS }, (_, i) => path.join(dir, `p${i + 1}.json`));
    const producers = files.map((file, i) =>
      runCli(['producer', '-n', String(COUNT), '--rate', '600', '--ledger', file, '--queue', queue, '--exchange', '', '--urls', rotated(i), '--json']),
    );
    try {
      // Kill once the three are under way (a third of what they send is in the queue), not after a guessed sleep.
      await eventually(async () => expect((await withChannel((ch) => ch.checkQueue(queue))).messageCount).toBeGreaterThanOrEqual(COUNT), 20_000, 100);
      const { leader } = await mgmtGet<{ leader: string }>(`/api/queues/%2F/${encodeURIComponent(queue)}`);
      await new Docker().getContainer(containerOf(leader)).kill({ signal: 'SIGKILL' });
    } finally {
      // The node comes back (cluster up starts it) while the producers go on through the other two.
      const up = await runCli(['cluster', 'up']);
      expect(up.exitCode, up.stderr).toBe(0);
    }
    const runs = await Promise.all(producers);
    const produced = runs.map((r) => {
      expect(r.exitCode, r.stderr).toBe(0);
      return parseJson<ProducerJson>(r);
    });
    for (const p of produced) expect(p.completed).toBe(true);
    // The kill reached the producer connected to the leader's node.
    expect(produced.reduce((n, p) => n + p.reconnects, 0)).toBeGreaterThanOrEqual(1);
    // All members back online before anything is read: the broker's count and the drain see one whole queue.
    await eventually(() => expectClusterWhole(queue), 60_000, 1_000);
    const held = await brokerCount();

    const v = await runCli(['verify', '--ledger', dir, '--idle-timeout', '500ms', '--json']);
    expect(v.exitCode, v.stderr).toBe(0);
    const doc = parseJson<VerifyJson>(v);
    expect(doc.ok).toBe(true);
    expect(doc.queue).toBe(queue);
    expect(doc.reconciliation).toBeUndefined();
    expect(doc.ledgers.map((l) => l.file)).toEqual(files);
    // Each ledger's run is its producer's, read from its own file; the three are distinct.
    for (const [i, l] of doc.ledgers.entries()) {
      const ledgerDoc = JSON.parse(await readFile(files[i]!, 'utf8')) as { ledger: { runId: string } };
      expect(l.runId).toBe(ledgerDoc.ledger.runId);
      expect(l.runId).toBe(produced[i]!.runId);
    }
    expect(new Set(doc.ledgers.map((l) => l.runId)).size).toBe(PRODUCERS);

    for (const [i, l] of doc.ledgers.entries()) {
      const r = l.reconciliation;
      expect(r.counts.attempted, l.file).toBe(COUNT);
      expect(r.counts.confirmed, l.file).toBe(produced[i]!.confirmed);
      expect(r.lost, l.file).toBe(0);
      expect(r.counts.unexpected, l.file).toBe(0);
      expect(r.verdict.ok, l.file).toBe(true);
    }
    const sum = (f: (r: Rec) => number): number => doc.ledgers.reduce((s, l) => s + f(l.reconciliation), 0);
    const t = doc.total;
    expect(t.ledgers).toBe(PRODUCERS);
    for (const k of ['attempted', 'confirmed', 'readDistinct', 'readTotal', 'unexpected'] as const) expect(t.counts[k], k).toBe(sum((r) => r.counts[k]));
    for (const k of ['lost', 'silentlyLost', 'knownFailed', 'indeterminateUnread', 'neverWritten', 'recovered', 'duplicated', 'duplicateDeliveries'] as const) {
      expect(t[k], k).toBe(sum((r) => r[k]));
    }
    expect(t.foreign.count).toBe(0);
    expect(t.verdict).toEqual({ ok: true, reasons: [] });
    // What the three ledgers read is what the broker held before the drain, by the witness's count.
    expect(t.counts.readTotal).toBe(held);
    expect(doc.drain).toMatchObject({ deliveries: held, complete: true, leftInQueue: 0 });
    expect(v.stderr).toMatch(/^total\s+3 ledgers\s+9000\s/m);
  });

  it('refuses, in one line before reading the queue: a run given twice (65), a folder file that is no ledger (65), two queues without --queue (2), a queue that does not exist (66)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-it-many-'));
    const p1 = path.join(dir, 'p1.json');
    const p2 = path.join(dir, 'other', 'p2.json');
    await mkdir(path.dirname(p2));
    for (const [file, q] of [
      [p1, queue],
      [p2, `${queue}.other`],
    ] as const) {
      const r = await runCli(['producer', '-n', '5', '--rate', '0', '--queue', q, '--exchange', '', '--routing-key', queue, '--ledger', file]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const oneLine = (r: { stderr: string }): string => {
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      return r.stderr.trim();
    };
    const twice = await runCli(['verify', '--ledger', p1, '--ledger', dir]);
    expect(twice.exitCode).toBe(65);
    const { runId } = (JSON.parse(await readFile(p1, 'utf8')) as { ledger: { runId: string } }).ledger;
    expect(oneLine(twice)).toContain(`run ${runId} is in 2 ledgers (${p1}, ${p1}): give each producer's ledger once`);
    const queues = await runCli(['verify', '--ledger', p1, '--ledger', p2]);
    expect(queues.exitCode).toBe(2);
    expect(oneLine(queues)).toContain(`the ledgers name 2 queues, ${queue} (${p1}); ${queue}.other (${p2}): say which to drain with --queue`);
    await writeFile(path.join(dir, 'notes.json'), '{"kind": "bench"}');
    const stranger = await runCli(['verify', '--ledger', dir, '--queue', queue]);
    expect(stranger.exitCode).toBe(65);
    expect(oneLine(stranger)).toContain(`${path.join(dir, 'notes.json')} is not a producer report (kind 'bench')`);
    // A queue that does not exist: the user's to fix (66), named, not an internal error.
    const missing = await runCli(['verify', '--ledger', p1, '--queue', `${queue}.missing`]);
    expect(missing.exitCode, missing.stderr).toBe(66);
    expect(oneLine(missing)).toContain(`the queue ${queue}.missing does not exist`);
    // Nothing was read: the 5 messages of p1 are still in the queue for the next drain.
    await withChannel(async (ch) => {
      expect((await ch.checkQueue(queue)).messageCount).toBe(10);
      await ch.purgeQueue(queue);
    });
  });
});

describe('order, read without a peek: a reorder the test plants is counted as one, and only it', { timeout: 120_000 }, () => {
  const planted = uniqueName('order-planted');
  useQuorumQueue(planted);

  it('the head message taken off and published again at the tail (not a redelivery): 1 read out of order, unexplained, its sequence named', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-it-order-'));
    const ledger = path.join(dir, 'p.json');
    const n = 200;
    const p = await runCli(['producer', '-n', String(n), '--rate', '0', '--ledger', ledger, '--queue', planted, '--exchange', '', '--json']);
    expect(p.exitCode, p.stderr).toBe(0);
    const { runId } = parseJson<ProducerJson>(p);
    // The test's own channel: the first message taken off the head (basic.get with no ack: gone
    // from the queue when the get returns; an ack sent just before the connection closes can lose
    // the race with the close, and the message comes back), then the same message (body and
    // properties) published again at the tail and confirmed. The queue holds 1..n-1 then 0, none
    // of them delivered before.
    const moved = await withChannel(async (ch) => {
      const m = await ch.get(planted, { noAck: true });
      if (m === false) throw new Error(`${planted} is empty`);
      const { messageId, headers, deliveryMode, contentType, timestamp } = m.properties;
      ch.sendToQueue(planted, m.content, { messageId, headers, deliveryMode, contentType, timestamp });
      await ch.waitForConfirms();
      return String(messageId);
    });
    expect(moved).toBe(`${runId}-0`);
    // Counted without a peek: nothing is delivered, so no read after it is flagged redelivered.
    expect(await brokerCount(planted)).toBe(n);

    const v = await runCli(['verify', '--ledger', ledger, '--idle-timeout', '500ms', '--json']);
    const doc = parseJson<{
      queue: string;
      reconciliation: {
        lost: number;
        counts: { readDistinct: number; readTotal: number; unexpected: number };
        order: { reads: number; outOfOrder: number; expected: number; unexplained: number; samples: number[] };
      };
    }>(v);
    expect(doc.queue).toBe(planted);
    const r = doc.reconciliation;
    expect(r.lost).toBe(0);
    expect(r.counts).toMatchObject({ readDistinct: n, readTotal: n, unexpected: 0 });
    expect(r.order).toMatchObject({ reads: n, outOfOrder: 1, expected: 0, unexplained: 1, samples: [0] });
    // Order is a finding the report states, not a loss: the verdict stands.
    expect(v.exitCode, v.stderr).toBe(0);
    expect(v.stderr).toContain('out of order with no redelivery, second copy or resend to explain them');
  });
});
