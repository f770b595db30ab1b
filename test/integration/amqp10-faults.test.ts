import { describe, expect, it } from 'vitest';
import { parseJson, runCli, uniqueName, withChannel } from './cli.js';
import { type CompareJson, type CompareRunJson, confirmedKept, confirmedKeptByTheBroker, compareArgv } from './compare-checks.js';
import { faultLeftovers } from './fixtures.js';
import { distinct, newWitnessFile, seqsOf, witnessAt, witnessLines } from './witness.js';

/*
 * AMQP 1.0 (rhea) under the faults the README quotes for it beside a kill (amqp10.test.ts): a
 * partition of the queue's leader, and the loss of its majority (the leader and a follower
 * killed). `compare --protocol amqp10` runs the producer that waits for each outcome, then the
 * pre-settled one, each counted by the tests' witness (queue-witness.mjs, no code of rmq-bench)
 * before rmq-bench drains the queue: no accepted message lost by the broker's ids, and the
 * pre-settled run's silent loss exactly what the broker never held. Heavy tier (shard j).
 */

interface Outcomes {
  settlement: string;
  accepted: number;
  released: number;
  rejected: number;
  modified: number;
}

type Run10 = CompareRunJson & { producer: CompareRunJson['producer'] & { amqp10: Outcomes; gaveUp: string | null; longestStallMs: number } };

const N = 3000;

const FAULTS = [
  // The leader cut off by iptables: the other two elect a new one.
  { fault: 'partition', elected: true },
  // No majority is left to elect anyone until both nodes are back, held as long as compare holds
  // it. Not 75 s (past the minute a producer elsewhere waits for credit): under that hold the
  // pre-settled producer can stop short of N in the loaded suite, for a reason not found yet (by
  // hand it writes all N).
  { fault: 'quorum-loss', elected: false },
] as const;

describe('AMQP 1.0 under a partition and a quorum loss (compare --protocol amqp10, witnessed)', { timeout: 600_000 }, () => {
  it.each(FAULTS)(
    '$fault of the leader: no accepted message lost by the broker; pre-settled loses exactly what the broker never held',
    async ({ fault, elected }) => {
      const queue = uniqueName(`amqp10-${fault}`);
      await withChannel((ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
      try {
        const out = await newWitnessFile();
        const r = await runCli(compareArgv({ queue, n: N, protocol: 'amqp10', rate: 250, fault, witnessOut: out }), { timeoutMs: 560_000 });
        expect(r.exitCode, r.stderr).toBe(0);
        const c = parseJson<CompareJson>(r);
        expect(c.runs.map((x) => x.mode)).toEqual(['amqp10-outcomes', 'amqp10-presettled']);
        expect(c.ok).toBe(true);
        const lines = witnessLines(out);

        const on = c.runs[0] as Run10;
        expect(on.fault?.kind).toBe(fault);
        expect(on.producer.amqp10.settlement).toBe('on-outcome');
        confirmedKept(on, N, { elected });
        confirmedKeptByTheBroker(on, witnessAt(lines, 'before-drain', 'amqp10-outcomes', queue), N);
        expect(on.fault?.restoredAtMs).not.toBeNull();
        expect(on.fault?.rejoinedAtMs).toBeGreaterThan(on.fault!.restoredAtMs!);

        const off = c.runs[1] as Run10;
        expect(off.fault?.kind).toBe(fault);
        expect(off.fault?.error ?? null).toBeNull();
        expect(off.producer.amqp10.settlement).toBe('pre-settled');
        const w = witnessAt(lines, 'before-drain', 'amqp10-presettled', queue);
        const { seqs, foreign } = seqsOf(w.ids!, off.runId);
        expect(foreign).toEqual([]);
        expect(
          seqs.every((s) => s >= 0 && s < N),
          'every id the broker held is one of the run',
        ).toBe(true);
        expect(off.producer.written, `the producer reported every message sent (gave up: ${off.producer.gaveUp ?? 'no'})`).toBe(N);
        expect(off.reconciliation.counts.confirmed).toBe(0);
        expect(off.reconciliation.counts.readDistinct).toBe(distinct(seqs));
        expect(off.reconciliation.silentlyLost).toBe(N - distinct(seqs));
        expect(off.reconciliation.lost).toBe(0);
        expect(off.reconciliation.counts.unexpected).toBe(0);

        expect(await faultLeftovers(queue)).toEqual([]);
      } finally {
        await withChannel((ch) => ch.deleteQueue(queue)).catch(() => undefined);
      }
    },
  );
});
