import { expect } from 'vitest';
import { NODES } from './cli.js';

/**
 * What a `compare --json` document must show, checked the same way by every file that runs
 * compare: producer.test.ts (the workshop's run: kill), leader-faults.test.ts (stop and pause).
 */

export interface Recon {
  counts: { attempted: number; written: number; confirmed: number; returned: number; readDistinct: number; unexpected: number };
  lost: number;
  silentlyLost: number;
  knownFailed: number;
  indeterminateUnread: number;
  neverWritten: number;
  duplicated: number;
  recovered: number;
  verdict: { ok: boolean };
}

export interface CompareRunJson {
  mode: string;
  leaderAtStart: string;
  producer: { written: number; reconnects: number };
  fault: {
    kind: string;
    node: string;
    newLeader: string | null;
    electionMs: number | null;
    restoredAtMs: number | null;
    rejoinedAtMs: number | null;
    error: string | null;
  } | null;
  reconciliation: Recon;
}

export interface CompareJson {
  ok: boolean;
  runs: CompareRunJson[];
  totals: { mode: string; lost: number; silentlyLost: number; attempted: number; reportedSent: number }[];
}

/** Every attempted message is in exactly one bucket. */
export function balanced(r: Recon): void {
  expect(r.counts.readDistinct + r.lost + r.silentlyLost + r.knownFailed + r.indeterminateUnread + r.neverWritten).toBe(r.counts.attempted);
}

/** One confirms-on run under a leader fault: nothing confirmed is lost, everything was confirmed and read. */
export function confirmedKept(run: CompareRunJson, n: number): void {
  expect(run.fault?.error ?? null).toBeNull();
  expect(run.fault?.node).toBe(run.leaderAtStart);
  expect(run.fault?.newLeader).not.toBe(run.leaderAtStart);
  expect(run.reconciliation.lost).toBe(0);
  expect(run.reconciliation.silentlyLost).toBe(0);
  expect(run.reconciliation.counts.unexpected).toBe(0);
  // Every message was eventually confirmed and read (duplicates allowed).
  expect(run.reconciliation.counts.confirmed).toBe(n);
  expect(run.reconciliation.counts.readDistinct).toBe(n);
  balanced(run.reconciliation);
}

/** One confirms-off run under a leader kill: the counts add up, and the verdict line says what was lost. */
export function silentLossCounted(c: CompareJson, stderr: string, n: number): void {
  const run = c.runs.find((r) => r.mode === 'confirms-off')!;
  const rec = run.reconciliation;
  balanced(rec);
  expect(rec.counts.confirmed).toBe(0);
  // Without confirms the producer cannot know: every written message that was not read is silently lost.
  expect(rec.knownFailed + rec.indeterminateUnread).toBe(0);
  expect(rec.silentlyLost).toBe(rec.counts.written - rec.counts.readDistinct);
  expect(rec.counts.readDistinct + rec.silentlyLost + rec.neverWritten).toBe(n);
  expect(run.producer.written).toBe(rec.counts.written);
  const t = c.totals.find((x) => x.mode === 'confirms-off')!;
  expect(t.silentlyLost).toBe(rec.silentlyLost);
  const verdictLine = stderr.split('\n').find((l) => l.startsWith('confirms off:'));
  expect(verdictLine).toBeDefined();
  if (rec.silentlyLost > 0) expect(verdictLine).toContain(`${rec.silentlyLost} of ${n} messages silently lost`);
  else expect(verdictLine).toContain('no message lost this time');
}

/**
 * The fault sequence of one run, to its end: the named fault, a node of this cluster elected
 * while it was on (after a measured election), the node restored, and the rejoin wait ended after
 * the restore (it ends only with every member online).
 */
export function faultHealed(run: CompareRunJson, kind: string): void {
  const f = run.fault!;
  expect(f.kind).toBe(kind);
  expect(NODES).toContain(f.newLeader);
  expect(f.electionMs).toBeGreaterThan(0);
  expect(f.restoredAtMs).not.toBeNull();
  expect(f.rejoinedAtMs).toBeGreaterThan(f.restoredAtMs!);
}
