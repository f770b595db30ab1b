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

/*
 * What the pre-settled run may stop short of N for: the broker granting its link no credit past
 * the producer's blocked timeout (180 s), which rmq-bench reports as giving up. Seen once under
 * quorum-loss with the whole heavy tier on two cores (credit never came back after the restore;
 * the same run by hand, 16 times beside three or four CPU hogs, wrote all N). A candidate cause: while the
 * queue has no leader, each pre-settled transfer makes the session register an enqueuer with a
 * synchronous Ra call of up to net_ticktime + 5 s per member (rabbit_fifo_client:enqueue), so the
 * session reads few transfers and grants no credit. The silent loss is then counted against what
 * was written, and the test prints the case; any other early stop fails.
 */
const PRE_SETTLED_STARVED = /granted .* no link credit for .* past the blocked timeout/;

const FAULTS = [
  // The leader cut off by iptables: the other two elect a new one.
  { fault: 'partition', elected: true },
  // No majority is left to elect anyone until both nodes are back, held as long as compare holds
  // it (its minimum). See PRE_SETTLED_STARVED below for what the loaded suite has seen here.
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
        const written = off.producer.written;
        if (written < N) {
          // Only the broker's withheld credit may stop it short, and only after the fault landed.
          expect(off.producer.gaveUp, `the producer stopped at ${written} of ${N}`).toMatch(PRE_SETTLED_STARVED);
          expect(written).toBeGreaterThan(N * 0.3);
          console.log(`amqp10 ${fault}: the pre-settled producer gave up at ${written} of ${N}: ${off.producer.gaveUp}`);
        }
        expect(
          seqs.every((s) => s >= 0 && s < written),
          'every id the broker held is one the producer wrote',
        ).toBe(true);
        expect(off.reconciliation.counts.confirmed).toBe(0);
        expect(off.reconciliation.counts.readDistinct).toBe(distinct(seqs));
        expect(off.reconciliation.silentlyLost).toBe(written - distinct(seqs));
        expect(off.reconciliation.lost).toBe(0);
        expect(off.reconciliation.counts.unexpected).toBe(0);

        expect(await faultLeftovers(queue)).toEqual([]);
      } finally {
        await withChannel((ch) => ch.deleteQueue(queue)).catch(() => undefined);
      }
    },
  );
});
