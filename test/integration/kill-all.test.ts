import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { callNode } from '../../src/cluster/broker/erl-call.js';
import { parseQuorumStatus, quorumStatusCall } from '../../src/cluster/broker/queue-leadership.js';
import { CONTAINERS, NODES, eventually, parseJson, runCli, uniqueName } from './cli.js';
import { type CompareRunJson, confirmedKeptByTheBroker, compareArgv } from './compare-checks.js';
import { expectClusterWhole, nodeLeftovers, useQuorumQueue } from './fixtures.js';
import { newWitnessFile, witnessAt, witnessLines } from './witness.js';

/** compare's document, with what a kill-all run adds: the other nodes faulted, and the producer's samples. */
type KillAllRun = CompareRunJson & {
  producer: { samples: { tMs: number; written: number; confirmed: number }[] };
  fault: NonNullable<CompareRunJson['fault']> & { alsoFaulted: string[]; faultAtMs: number };
};

const queue = uniqueName('kill-all');
/** --hold: how long every node is held down. */
const HOLD_MS = 10_000;

/*
 * kill-all, a power cut of the whole rack: every node SIGKILLed at once, then all started again.
 * A message a quorum queue confirmed was on a majority's disk before its confirm, so it survives
 * the cut: counted by the broker (the witness's passive declare and every id it holds, before
 * rmq-bench drains the queue), not only by rmq-bench's ledger.
 */
describe('kill-all: every node killed at once, then all started again', { timeout: 300_000 }, () => {
  useQuorumQueue(queue);

  it('compare, confirms on: nothing confirmed is lost, nothing is confirmed while every node is down, every node was restarted and the cluster is whole after', async () => {
    const docker = new Docker();
    const startedAt = (): Promise<number[]> => Promise.all(CONTAINERS.map(async (c) => Date.parse((await docker.getContainer(c).inspect()).State.StartedAt)));
    const before = await startedAt();
    const out = await newWitnessFile();
    // The cut halfway (3 s in): the queue is seconds old at the cut. A quorum queue declared well
    // under a second before every node is killed can come back as new, empty members on every node
    // (RabbitMQ logs "Starting member as a new one. Context: name_not_registered": Ra had not
    // saved its members' names yet), and its confirmed messages are then lost: seen once in 17
    // runs with the cut 0.7 s after the declaration. That is not what this test is about.
    // Every node stays down HOLD_MS after the kills were issued; then the restore starts them and
    // waits until the cluster is whole (so restoredAtMs comes after the nodes are back).
    const r = await runCli(compareArgv({ queue, n: 3000, rate: 500, fault: 'kill-all', faultAt: 0.5, hold: `${HOLD_MS}ms`, witnessOut: out }));
    expect(r.exitCode, r.stderr).toBe(0);
    const c = parseJson<{ ok: boolean; runs: KillAllRun[] }>(r);
    expect(c.ok).toBe(true);
    const run = c.runs[0]!;
    const f = run.fault;
    expect(f.error).toBeNull();
    expect(f.kind).toBe('kill-all');
    expect(f.node).toBe(run.leaderAtStart);
    // Every other node went down with the leader; none was awaited as a new leader.
    expect([f.node, ...f.alsoFaulted].sort()).toEqual([...NODES].sort());
    expect(f.newLeader).toBeNull();
    expect(f.appliedAtMs).not.toBeNull();
    expect(f.restoredAtMs).not.toBeNull();
    expect(f.rejoinedAtMs).not.toBeNull();

    // While every node was down nothing was confirmed: from the first sample at or after the
    // kills until the restore began (the hold after the kills were issued), the confirmed count
    // never passes what had been written by then (a count, not a time).
    const samples = run.producer.samples;
    const atCut = samples.find((s) => s.tMs >= f.appliedAtMs!);
    expect(atCut, 'a producer sample after the kills').toBeDefined();
    const during = samples.filter((s) => s.tMs >= atCut!.tMs && s.tMs < f.faultAtMs + HOLD_MS);
    expect(during.length).toBeGreaterThan(10);
    for (const s of during) expect(s.confirmed, `confirmed at ${s.tMs} ms, written by ${atCut!.tMs} ms`).toBeLessThanOrEqual(atCut!.written);

    expect(run.reconciliation.lost).toBe(0);
    expect(run.reconciliation.counts.unexpected).toBe(0);
    expect(run.reconciliation.counts.confirmed).toBe(3000);
    expect(run.reconciliation.counts.readDistinct).toBe(3000);
    // The broker's own count and ids, taken before rmq-bench drained the queue.
    confirmedKeptByTheBroker(run, witnessAt(witnessLines(out), 'before-drain', 'confirms-on', queue), 3000);

    // Docker's own clock: every container was started again during the run.
    const after = await startedAt();
    for (const [i, t] of after.entries()) expect(t, CONTAINERS[i]).toBeGreaterThan(before[i]!);
    // Whole by Raft's own account, asked in each node's container: three members, one leader, the
    // others following.
    for (const [i, container] of CONTAINERS.entries()) {
      const status = parseQuorumStatus(await callNode(docker, container, `rabbit@${NODES[i]!}`, quorumStatusCall({ vhost: '/', queue }), 15_000));
      expect(status.members.map((m) => m.node).sort(), container).toEqual(NODES.map((n) => `rabbit@${n}`).sort());
      expect(status.members.map((m) => m.state).sort(), container).toEqual(['follower', 'follower', 'leader']);
    }
    // And by the management API. Its `online` is a statistic each node emits on its own schedule;
    // with every node just restarted one read was seen to list 2 of 3 members online while the
    // third member's node logged it running and following: read until it settles.
    await eventually(async () => expect(await nodeLeftovers(queue)).toEqual([]), 20_000, 500);
    await expectClusterWhole(queue);
  });
});
