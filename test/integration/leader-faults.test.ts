import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { callNode } from '../../src/cluster/broker/erl-call.js';
import { parseQuorumStatus, quorumStatusCall } from '../../src/cluster/broker/queue-leadership.js';
import { CONTAINERS, NODES, mgmtGet, parseJson, runCli, uniqueName } from './cli.js';
import { expectClusterWhole, useQuorumQueue } from './fixtures.js';
import { type CompareJson, confirmedKept, confirmedKeptByTheBroker, faultHealed, compareArgv } from './compare-checks.js';
import { witnessAt, newWitnessFile, witnessLines } from './witness.js';

/*
 * Each way of faulting a leader that takes it away, once, under a confirms-on producer (compare
 * --confirms on): nothing confirmed is lost, a different node led while the fault was on, and after
 * the restore every node runs and every member of the queue is online again. Stop and pause here;
 * kill is the workshop's compare (producer.test.ts checks the same of its two runs: a node
 * restart costs the machine some 4 to 6 CPU-s, so one is not spent on a third kill). The fault
 * sequence is the one every command uses (startLeaderFault); failover.test.ts runs the failover
 * command itself (disconnect, --no-restore), netfaults.test.ts the network faults.
 */

const queue = uniqueName('leader-faults');

describe('confirms on under each leader fault', { timeout: 300_000 }, () => {
  useQuorumQueue(queue);

  it("asked inside each node's container (erl_call), quorum_status names the leader the management API names; an unknown queue is an error", async () => {
    const docker = new Docker();
    const { leader } = await mgmtGet<{ leader: string }>(`/api/queues/%2F/${encodeURIComponent(queue)}`);
    for (const [i, container] of CONTAINERS.entries()) {
      const status = parseQuorumStatus(await callNode(docker, container, `rabbit@${NODES[i]!}`, quorumStatusCall({ vhost: '/', queue }), 15_000));
      expect(status.leader).toBe(leader);
      expect(status.members.map((m) => m.node).sort()).toEqual(NODES.map((n) => `rabbit@${n}`));
    }
    await expect(callNode(docker, CONTAINERS[0]!, `rabbit@${NODES[0]!}`, quorumStatusCall({ vhost: '/', queue: `${queue}.missing` }), 15_000)).rejects.toThrow(
      /not_found/,
    );
  });

  for (const [fault, faultAt] of [
    ['stop', 0.3],
    ['pause', 0.3],
  ] as const) {
    it(`${fault} of the leader at ${faultAt}: no confirmed message is lost; a different node leads, and after the restore all 3 nodes run with 3 online members`, async () => {
      const out = await newWitnessFile();
      const r = await runCli(compareArgv({ queue, n: 3000, fault, faultAt, witnessOut: out }));
      expect(r.exitCode, r.stderr).toBe(0);
      const c = parseJson<CompareJson>(r);
      expect(c.ok).toBe(true);
      const run = c.runs[0]!;
      confirmedKept(run, 3000);
      // The broker's own count and ids, taken before rmq-bench drained the queue.
      confirmedKeptByTheBroker(run, witnessAt(witnessLines(out), 'before-drain', 'confirms-on', queue), 3000);
      faultHealed(run, fault);

      await expectClusterWhole(queue);
    });
  }

  it('a rolling restart under traffic (every node stopped and started in turn, each once the cluster is whole): no confirmed message is lost, and every node really was restarted', async () => {
    const docker = new Docker();
    const startedAt = async (): Promise<number[]> =>
      Promise.all(CONTAINERS.map(async (c) => Date.parse((await docker.getContainer(c).inspect()).State.StartedAt)));
    const before = await startedAt();
    const out = await newWitnessFile();
    // 150/s for 20 s: the roll (three clean restarts on this machine, about 25 s) runs while the producer writes.
    const r = await runCli(compareArgv({ queue, n: 3000, rate: 150, fault: 'rolling-restart', faultAt: 0.1, witnessOut: out }));
    expect(r.exitCode, r.stderr).toBe(0);
    const c = parseJson<CompareJson>(r);
    expect(c.ok).toBe(true);
    const run = c.runs[0]!;
    confirmedKept(run, 3000, { elected: false });
    confirmedKeptByTheBroker(run, witnessAt(witnessLines(out), 'before-drain', 'confirms-on', queue), 3000);
    expect(run.fault?.kind).toBe('rolling-restart');
    expect(run.fault?.error ?? null).toBeNull();
    // Docker's own clock: each container started again during the run, highest ordinal first.
    const after = await startedAt();
    for (const [i, t] of after.entries()) expect(t, CONTAINERS[i]).toBeGreaterThan(before[i]!);
    expect([...after].sort((a, b) => b - a)).toEqual(after);
    await expectClusterWhole(queue);
  });
});
