import { describe, expect, it } from 'vitest';
import { mgmtGet, parseJson, runCli, uniqueName } from './cli.js';
import { type CompareRunJson, confirmedKeptByTheBroker } from './compare-checks.js';
import { useQuorumQueue } from './fixtures.js';
import { witnessAt, newWitnessFile, witnessCommand, witnessLines } from './witness.js';

/** compare's document, with what a quorum-loss run adds: the second node faulted, and the producer's samples. */
type QuorumLossRun = CompareRunJson & {
  producer: { samples: { tMs: number; confirmed: number }[] };
  fault: NonNullable<CompareRunJson['fault']> & { alsoFaulted: string[] };
};

const queue = uniqueName('quorum-loss');

describe('quorum-loss: the leader and a follower killed, no majority left', { timeout: 300_000 }, () => {
  useQuorumQueue(queue);

  it('compare, confirms on: nothing is confirmed while the majority is gone, nothing confirmed is lost, both nodes come back', async () => {
    const out = await newWitnessFile();
    const r = await runCli([
      'compare',
      '--confirms',
      'on',
      '--queue',
      queue,
      '-n',
      '3000',
      '--rate',
      '500',
      '--fault',
      'quorum-loss',
      '--fault-at',
      '0.1',
      '--checkpoint-cmd',
      witnessCommand(out, { peek: true, queue }),
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const c = parseJson<{ ok: boolean; runs: QuorumLossRun[] }>(r);
    expect(c.ok).toBe(true);
    const run = c.runs[0]!;
    const f = run.fault;
    expect(f.error).toBeNull();
    expect(f.kind).toBe('quorum-loss');
    expect(f.node).toBe(run.leaderAtStart);
    expect(f.alsoFaulted).toHaveLength(1);
    expect(f.alsoFaulted[0]).not.toBe(f.node);
    expect(f.appliedAtMs).not.toBeNull();
    expect(f.restoredAtMs).not.toBeNull();
    expect(f.rejoinedAtMs).not.toBeNull();
    // From the second kill (plus a moment for confirms already on the wire) to the restore, no confirm arrived.
    const during = run.producer.samples.filter((s) => s.tMs > f.appliedAtMs! + 500 && s.tMs < f.restoredAtMs!);
    expect(during.length).toBeGreaterThan(10);
    expect(new Set(during.map((s) => s.confirmed)).size).toBe(1);
    expect(run.reconciliation.lost).toBe(0);
    expect(run.reconciliation.counts.unexpected).toBe(0);
    expect(run.reconciliation.counts.confirmed).toBe(3000);
    expect(run.reconciliation.counts.readDistinct).toBe(3000);
    // The broker's own count and ids, taken before rmq-bench drained the queue.
    confirmedKeptByTheBroker(run, witnessAt(witnessLines(out), 'before-drain', 'confirms-on', queue), 3000);
    const nodes = await mgmtGet<{ running: boolean }[]>('/api/nodes');
    expect(nodes.filter((n) => n.running)).toHaveLength(3);
  });
});
