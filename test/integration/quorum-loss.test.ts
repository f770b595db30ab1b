import { describe, expect, it } from 'vitest';
import { parseJson, runCli, uniqueName } from './cli.js';
import { type CompareRunJson, confirmedKeptByTheBroker, compareArgv } from './compare-checks.js';
import { expectClusterWhole, useQuorumQueue } from './fixtures.js';
import { witnessAt, newWitnessFile, witnessLines } from './witness.js';

/** compare's document, with what a quorum-loss run adds: the second node faulted, and the producer's samples. */
type QuorumLossRun = CompareRunJson & {
  producer: { samples: { tMs: number; written: number; confirmed: number }[] };
  fault: NonNullable<CompareRunJson['fault']> & { alsoFaulted: string[] };
};

const queue = uniqueName('quorum-loss');

describe('quorum-loss: the leader and a follower killed, no majority left', { timeout: 300_000 }, () => {
  useQuorumQueue(queue);

  it('compare, confirms on: nothing is confirmed while the majority is gone, nothing confirmed is lost, both nodes come back and nothing is left behind', async () => {
    const out = await newWitnessFile();
    const r = await runCli(compareArgv({ queue, n: 3000, rate: 500, fault: 'quorum-loss', faultAt: 0.1, witnessOut: out }));
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
    // Nothing written once the majority was gone is confirmed before the restore: from the first
    // sample at or after the second kill, the producer's confirmed count never passes what it had
    // written by that sample (a confirm already on the wire at the kill is within it), while it
    // went on writing (so the check is not empty). A count, not a time: it holds on a slow machine.
    const samples = run.producer.samples;
    const atLoss = samples.find((s) => s.tMs >= f.appliedAtMs!);
    expect(atLoss, 'a producer sample after the second kill').toBeDefined();
    const during = samples.filter((s) => s.tMs >= atLoss!.tMs && s.tMs < f.restoredAtMs!);
    expect(during.length).toBeGreaterThan(10);
    for (const s of during) expect(s.confirmed, `confirmed at ${s.tMs} ms, written by ${atLoss!.tMs} ms`).toBeLessThanOrEqual(atLoss!.written);
    expect(during.at(-1)!.written).toBeGreaterThan(atLoss!.written);
    expect(run.reconciliation.lost).toBe(0);
    expect(run.reconciliation.counts.unexpected).toBe(0);
    expect(run.reconciliation.counts.confirmed).toBe(3000);
    expect(run.reconciliation.counts.readDistinct).toBe(3000);
    // The broker's own count and ids, taken before rmq-bench drained the queue.
    confirmedKeptByTheBroker(run, witnessAt(witnessLines(out), 'before-drain', 'confirms-on', queue), 3000);
    await expectClusterWhole(queue);
  });
});
