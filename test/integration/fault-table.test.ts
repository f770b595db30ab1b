import { describe, it } from 'vitest';
import { uniqueName, withChannel } from './cli.js';
import { type FaultRow, witnessedFaultRow } from './fault-rows.js';

/*
 * The README's fault table ("Each fault under traffic"), the rows no other file runs under
 * compare: each fault on the leader of a quorum queue while a producer publishes with confirms,
 * counted by the tests' witness before rmq-bench drains the queue. Each run asserts what the row
 * claims: no confirmed message lost by the broker's count and ids, the election (where the leader
 * moves) and the producer's longest stall within a bound, and nothing left behind (rules, qdiscs,
 * containers, members). kill: producer.test.ts (the workshop's compare); stop and pause:
 * leader-faults.test.ts; quorum-loss: quorum-loss.test.ts; the ring: five-nodes.test.ts.
 *
 * The bounds catch a hang or a fault that did something else, not a slow machine. Measured with
 * `node bench/failover-faults.mjs --runs 3` (the README's table), election and longest stall:
 * disconnect 6.4-9.1 s and 6.0-10.3 s; partition 9.0-11.9 s and 10.1-10.3 s; partition-halves
 * 7.7-12.0 s and 10.3-20.4 s; partition-bridge no election, 0.1 s; slow-link no election,
 * 0.5-0.8 s; membership 4.9-6.8 s and 0.1-0.4 s. A silent node is noticed by net_ticktime (60 s) at
 * the latest, so an election after a cut is bounded by it, and a stall by it and the election
 * after. A fault that moves no leader must not stall the producer for an election's length: 20 s.
 */

const ROWS: FaultRow[] = [
  { fault: 'disconnect', elected: true, electionWithinMs: 60_000, stallWithinMs: 90_000 },
  { fault: 'partition', elected: true, electionWithinMs: 60_000, stallWithinMs: 90_000 },
  { fault: 'partition-halves', elected: true, electionWithinMs: 60_000, stallWithinMs: 90_000 },
  { fault: 'partition-bridge', elected: false, electionWithinMs: null, stallWithinMs: 20_000 },
  { fault: 'slow-link', elected: false, electionWithinMs: null, stallWithinMs: 20_000 },
  { fault: 'membership', elected: true, electionWithinMs: 30_000, stallWithinMs: 20_000 },
];

describe('the fault table under traffic: each row with a witnessed compare --confirms on', { timeout: 400_000 }, () => {
  // A queue of its own per row, deleted after it: a row's run reads only its own messages, and a
  // message of an earlier row returned to a shared queue would count as unexpected.
  it.each(ROWS)('$fault of the leader: 0 confirmed lost by the broker, the election and the stall within their bounds, nothing left behind', async (row) => {
    const queue = uniqueName(`fault-table-${row.fault}`);
    await withChannel((ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
    try {
      await witnessedFaultRow(queue, row);
    } finally {
      await withChannel((ch) => ch.deleteQueue(queue)).catch(() => undefined);
    }
  });
});
