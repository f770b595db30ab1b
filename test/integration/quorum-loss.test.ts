import { describe, expect, it } from 'vitest';
import { mgmtGet, parseJson, runCli, uniqueName } from './cli.js';
import { useQuorumQueue } from './fixtures.js';

interface CompareJson {
  ok: boolean;
  runs: {
    mode: string;
    leaderAtStart: string;
    producer: { samples: { tMs: number; confirmed: number }[] };
    fault: {
      kind: string;
      node: string;
      alsoFaulted: string[];
      appliedAtMs: number | null;
      restoredAtMs: number | null;
      rejoinedAtMs: number | null;
      error: string | null;
    };
    reconciliation: { lost: number; counts: { confirmed: number; readDistinct: number; unexpected: number } };
  }[];
}

const queue = uniqueName('quorum-loss');

describe('quorum-loss: the leader and a follower killed, no majority left', { timeout: 300_000 }, () => {
  useQuorumQueue(queue);

  it('compare, confirms on: nothing is confirmed while the majority is gone, nothing confirmed is lost, both nodes come back', async () => {
    const r = await runCli([
      'compare',
      '--mode',
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
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const c = parseJson<CompareJson>(r);
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
    const nodes = await mgmtGet<{ running: boolean }[]>('/api/nodes');
    expect(nodes.filter((n) => n.running)).toHaveLength(3);
  });
});
