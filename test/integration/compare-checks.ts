import { expect } from 'vitest';
import { NODES } from './cli.js';
import { distinct, seqsOf, witnessCommand, type WitnessLine } from './witness.js';

/**
 * What a `compare --json` document must show, checked the same way by every file that runs
 * compare: producer.test.ts (the workshop's run: kill), leader-faults.test.ts (stop and pause).
 */

export interface Recon {
  counts: {
    attempted: number;
    written: number;
    confirmed: number;
    returned: number;
    readDistinct: number;
    readTotal: number;
    unexpected: number;
  };
  lost: number;
  silentlyLost: number;
  knownFailed: number;
  indeterminateUnread: number;
  neverWritten: number;
  duplicated: number;
  duplicateDeliveries: number;
  recovered: number;
  verdict: { ok: boolean };
}

export interface CompareRunJson {
  mode: string;
  runId: string;
  leaderAtStart: string;
  producer: { written: number; reconnects: number };
  drain: { deliveries: number; complete: boolean; leftInQueue: number };
  fault: {
    kind: string;
    node: string;
    newLeader: string | null;
    appliedAtMs: number | null;
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

/**
 * The longest election a fault may take, from its application to a new leader seen. A kill or a
 * stop closes the node's connections at once and the others elect within a second (kill 0.38 to
 * 0.67 s in six runs, stop 0.49 and 0.51 s, `rmq-bench failover` or compare on a quiet cluster);
 * 15 s leaves room for five busy clusters. A paused, partitioned or disconnected node says
 * nothing: the others notice it through their failure detector (pause 3.2 and 7.4 s, partition
 * 6.1 to 8.9 s, disconnect 8.8 and 10.4 s measured the same way), and the Erlang distribution's
 * net_ticktime (60 s, the cluster's default) is the latest it can come.
 */
export const ELECTION_WITHIN_MS: Record<string, number> = { kill: 15_000, stop: 15_000, pause: 60_000, partition: 60_000, disconnect: 60_000 };

/** A new leader: a node of this cluster, not the faulted one (null fails). */
export function newLeaderElected(newLeader: string | null | undefined, faulted: string): void {
  expect(NODES, `new leader ${newLeader} (the faulted node: ${faulted})`).toContain(newLeader);
  expect(newLeader).not.toBe(faulted);
}

/**
 * One confirms-on run under a leader fault, by its own document: nothing confirmed is lost,
 * everything was confirmed and read. elected: false for a fault that awaits no election (a
 * rolling restart).
 */
export function confirmedKept(run: CompareRunJson, n: number, options: { elected?: boolean } = {}): void {
  expect(run.fault?.error ?? null).toBeNull();
  expect(run.fault?.node).toBe(run.leaderAtStart);
  if (options.elected ?? true) newLeaderElected(run.fault?.newLeader, run.leaderAtStart);
  else expect(run.fault?.newLeader ?? null).toBeNull();
  expect(run.reconciliation.lost).toBe(0);
  expect(run.reconciliation.silentlyLost).toBe(0);
  expect(run.reconciliation.counts.unexpected).toBe(0);
  // Every message was eventually confirmed and read (duplicates allowed).
  expect(run.reconciliation.counts.confirmed).toBe(n);
  expect(run.reconciliation.counts.readDistinct).toBe(n);
}

/**
 * The same run against the broker's own count, taken by the tests' witness before rmq-bench
 * drained the queue (--checkpoint-cmd, --peek): the queue held every one of the n messages of
 * this run (and nothing else), and rmq-bench's drain read exactly what the queue held.
 */
export function confirmedKeptByTheBroker(run: CompareRunJson, w: WitnessLine, n: number): void {
  expect(w.ids, 'the witness peeked').not.toBeNull();
  expect(w.ids!.length, 'the witness peeked every message the queue held').toBe(w.messages);
  const { seqs, foreign } = seqsOf(w.ids!, run.runId);
  expect(foreign).toEqual([]);
  expect(distinct(seqs)).toBe(n);
  expect(Math.min(...seqs)).toBe(0);
  expect(Math.max(...seqs)).toBe(n - 1);
  // rmq-bench's drain read what the broker held: each copy once, duplicates included.
  expect(run.drain.deliveries).toBe(w.messages);
  expect(run.reconciliation.counts.readTotal).toBe(w.messages);
  expect(run.reconciliation.duplicateDeliveries).toBe(w.messages - distinct(seqs));
}

/**
 * A confirms-off run under a leader kill, against the broker's count before the drain: the
 * producer reported every message sent, the queue held fewer, and rmq-bench calls exactly the
 * difference silently lost (more than none: the claim the demo exists for).
 */
export function silentLossByTheBroker(run: CompareRunJson, w: WitnessLine, n: number): void {
  expect(run.mode).toBe('confirms-off');
  expect(run.producer.written, 'the producer reported every message sent').toBe(n);
  expect(w.messages, 'the broker holds fewer than were sent').toBeLessThan(n);
  expect(run.reconciliation.counts.confirmed).toBe(0);
  expect(run.reconciliation.counts.readDistinct).toBe(w.messages);
  expect(run.reconciliation.silentlyLost).toBe(n - w.messages);
  expect(run.reconciliation.silentlyLost).toBeGreaterThan(0);
  expect(run.reconciliation.lost + run.reconciliation.knownFailed + run.reconciliation.indeterminateUnread + run.reconciliation.neverWritten).toBe(0);
}

/** The workshop's confirms-off run (no witness there): nothing claimed confirmed, and the verdict line says what the document counts. */
export function silentLossReported(c: CompareJson, stderr: string, n: number): void {
  const run = c.runs.find((r) => r.mode === 'confirms-off')!;
  const rec = run.reconciliation;
  expect(rec.counts.confirmed).toBe(0);
  expect(run.producer.written).toBe(n);
  expect(rec.counts.attempted).toBe(n);
  const t = c.totals.find((x) => x.mode === 'confirms-off')!;
  expect(t.silentlyLost).toBe(rec.silentlyLost);
  const verdictLine = stderr.split('\n').find((l) => l.startsWith('confirms off:'));
  expect(verdictLine).toBeDefined();
  if (rec.silentlyLost > 0) expect(verdictLine).toContain(`${rec.silentlyLost} of ${n} messages silently lost`);
  else expect(verdictLine).toContain('no message lost this time');
}

/**
 * The fault sequence of one run, to its end: the named fault on the leader, a node of this
 * cluster elected while it was on (within the fault's bound), the node restored, and the rejoin
 * wait ended after the restore (it ends only with every member online).
 */
export function faultHealed(run: CompareRunJson, kind: string): void {
  const f = run.fault!;
  expect(f.kind).toBe(kind);
  expect(f.node).toBe(run.leaderAtStart);
  newLeaderElected(f.newLeader, f.node);
  expect(f.electionMs).toBeGreaterThan(0);
  expect(f.electionMs, `${kind}: elected within ${ELECTION_WITHIN_MS[kind]} ms`).toBeLessThanOrEqual(ELECTION_WITHIN_MS[kind]!);
  expect(f.restoredAtMs).not.toBeNull();
  expect(f.rejoinedAtMs).toBeGreaterThan(f.restoredAtMs!);
}

/** One `compare --json` run against one queue under one fault: what the fault tests vary. */
export interface CompareRun {
  queue: string;
  n: number;
  fault: string;
  /** AMQP 1.0 (its outcomes); confirms on over AMQP 0-9-1 when left out. */
  protocol?: 'amqp10';
  rate?: number;
  faultAt?: number;
  hold?: string;
  /** The witness's output file: the broker's count of the queue, peeked at each checkpoint. */
  witnessOut?: string;
}

/** The argv of that run, for runCli. */
/** compare's own stream (`--queue-type stream` names no --queue), declared afresh for each run. */
export const COMPARE_STREAM = 'rmq-bench.compare.stream';

/** `compare --queue-type stream --protocol <protocol>` of `n` at 250/s under a kill of the writer, the witness reading the stream from its first offset into `witnessOut`. */
export function streamCompareArgv(protocol: string, n: number, witnessOut: string, fault = 'kill'): string[] {
  return [
    'compare',
    '--queue-type',
    'stream',
    '--protocol',
    protocol,
    '-n',
    String(n),
    '--rate',
    '250',
    '--fault',
    fault,
    '--checkpoint-cmd',
    witnessCommand(witnessOut, { stream: true, queue: COMPARE_STREAM }),
    '--json',
  ];
}

export function compareArgv(o: CompareRun): string[] {
  return [
    'compare',
    ...(o.protocol === undefined ? ['--confirms', 'on'] : ['--protocol', o.protocol]),
    '--queue',
    o.queue,
    '-n',
    String(o.n),
    ...(o.rate === undefined ? [] : ['--rate', String(o.rate)]),
    '--fault',
    o.fault,
    ...(o.faultAt === undefined ? [] : ['--fault-at', String(o.faultAt)]),
    ...(o.hold === undefined ? [] : ['--hold', o.hold]),
    ...(o.witnessOut === undefined ? [] : ['--checkpoint-cmd', witnessCommand(o.witnessOut, { peek: true, queue: o.queue })]),
    '--json',
  ];
}
