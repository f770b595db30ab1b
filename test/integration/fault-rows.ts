import { expect } from 'vitest';
import { parseJson, runCli } from './cli.js';
import { type CompareJson, type CompareRunJson, confirmedKept, confirmedKeptByTheBroker, compareArgv } from './compare-checks.js';
import { faultLeftovers } from './fixtures.js';
import { newWitnessFile, witnessAt, witnessLines } from './witness.js';

/**
 * One row of the README's fault table, checked as it claims: `compare --confirms on --fault
 * <kind>` on the leader of `queue` while a producer publishes, counted by the tests' witness
 * before rmq-bench drains the queue: no confirmed message lost by the broker's count and ids, the
 * election (where the leader moves) and the producer's longest stall within their bounds, and
 * nothing left behind (rules, qdiscs, containers, nodes, members). fault-table.test.ts runs the
 * rows of 3 nodes, five-nodes.test.ts the ring.
 */
export interface FaultRow {
  fault: string;
  /** A new leader is awaited (the old one cut off, or removed). */
  elected: boolean;
  electionWithinMs: number | null;
  stallWithinMs: number;
}

const N = 3000;

type Run = CompareRunJson & { producer: CompareRunJson['producer'] & { longestStallMs: number } };

export async function witnessedFaultRow(queue: string, row: FaultRow): Promise<void> {
  const out = await newWitnessFile();
  const r = await runCli(compareArgv({ queue, n: N, rate: 250, fault: row.fault, witnessOut: out }), { timeoutMs: 380_000 });
  expect(r.exitCode, r.stderr).toBe(0);
  const c = parseJson<CompareJson>(r);
  expect(c.ok).toBe(true);
  const run = c.runs[0] as Run;
  expect(run.fault?.kind).toBe(row.fault);
  confirmedKept(run, N, { elected: row.elected });
  confirmedKeptByTheBroker(run, witnessAt(witnessLines(out), 'before-drain', 'confirms-on', queue), N);
  const f = run.fault!;
  if (row.electionWithinMs !== null) {
    expect(f.electionMs).toBeGreaterThan(0);
    expect(f.electionMs, `${row.fault}: elected within ${row.electionWithinMs} ms`).toBeLessThanOrEqual(row.electionWithinMs);
  } else expect(f.electionMs).toBeNull();
  expect(run.producer.longestStallMs, `${row.fault}: the producer's longest stall`).toBeLessThanOrEqual(row.stallWithinMs);
  expect(f.restoredAtMs).not.toBeNull();
  expect(f.rejoinedAtMs).toBeGreaterThan(f.restoredAtMs!);
  expect(await faultLeftovers(queue)).toEqual([]);
}
