import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODES, parseJson, runCli, uniqueName, withChannel } from './cli.js';
import { type CompareJson, confirmedKept } from './compare-checks.js';

/*
 * Each way of faulting a leader that takes it away (kill, stop, pause), once, under a confirms-on
 * producer (compare --mode on): nothing confirmed is lost, a different node led while the fault
 * was on, and after the restore every node runs and every member of the queue is online again.
 * The fault sequence is the one every command uses (startLeaderFault); failover.test.ts runs the
 * failover command itself (disconnect, --no-restore), netfaults.test.ts the network faults.
 */

const queue = uniqueName('leader-faults');

describe('confirms on under each leader fault', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    await withChannel((ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
  });
  afterAll(async () => {
    await withChannel((ch) => ch.deleteQueue(queue)).catch(() => undefined);
  });

  for (const [fault, faultAt] of [
    ['kill', '0.6'],
    ['stop', '0.3'],
    ['pause', '0.3'],
  ] as const) {
    it(`${fault} of the leader at ${faultAt}: no confirmed message is lost; a different node leads, and after the restore all 3 nodes run with 3 online members`, async () => {
      const r = await runCli(['compare', '--mode', 'on', '--queue', queue, '-n', '3000', '--fault', fault, '--fault-at', faultAt, '--json']);
      expect(r.exitCode, r.stderr).toBe(0);
      const c = parseJson<CompareJson>(r);
      expect(c.ok).toBe(true);
      const run = c.runs[0]!;
      confirmedKept(run, 3000);
      const f = run.fault!;
      expect(f.kind).toBe(fault);
      expect(NODES).toContain(f.newLeader);
      expect(f.electionMs).toBeGreaterThan(0);
      // Restored, then back: the rejoin wait ends only with every member online.
      expect(f.restoredAtMs).not.toBeNull();
      expect(f.rejoinedAtMs).toBeGreaterThan(f.restoredAtMs!);

      const status = parseJson<{ nodes: { container: string; running: boolean }[]; queues: { name: string; online: string[] }[] }>(
        await runCli(['cluster', 'status', '--json']),
      );
      expect(status.nodes.map((n) => [n.container, n.running])).toEqual([
        ['running', true],
        ['running', true],
        ['running', true],
      ]);
      expect(status.queues.find((q) => q.name === queue)?.online).toHaveLength(3);
    });
  }
});
