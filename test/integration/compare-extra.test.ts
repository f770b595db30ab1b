import Docker from 'dockerode';
import { execa } from 'execa';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  closedPort,
  CONTAINER_PREFIX,
  eventually,
  parseJson,
  PASSWORD,
  ROOT,
  runCli,
  uniqueName,
  USER,
  withChannel,
  NODES,
  containerOf,
  AMQP_URLS,
  MGMT_URLS,
  MGMT_PORTS,
} from './cli.js';
import { newLeaderElected } from './compare-checks.js';
import { useQuorumQueue } from './fixtures.js';

const queue = uniqueName('compare-extra');
const docker = new Docker();

/** compare --confirms on at 500 msg/s on this file's queue, faulting the leader after 1%: a child to interrupt. */
function compareChild(fault: string, hold: string) {
  return execa(
    'node',
    [
      path.join(ROOT, 'bin', 'rmq-bench.js'),
      'compare',
      '--confirms',
      'on',
      '--queue',
      queue,
      '-n',
      '100000',
      '--rate',
      '500',
      '--fault',
      fault,
      '--fault-at',
      '0.01',
      '--hold',
      hold,
      '--json',
    ],
    // Progress lines on (stderr is not a TTY: plain lines), so that a failure shows where the child was.
    { cwd: ROOT, reject: false, stdin: 'ignore', env: { RMQ_BENCH_QUIET: '0' } },
  );
}

/** The first node whose container state says the fault is on. */
function faultedNode(isFaulted: (state: { Paused: boolean; Running: boolean }) => boolean, what: string): Promise<string> {
  return eventually(
    async () => {
      for (const n of NODES) if (isFaulted((await docker.getContainer(containerOf(n)).inspect()).State)) return n;
      throw new Error(`no node ${what} yet`);
    },
    // The child first waits (up to 30 s) for every queue member to be online, and a pause the
    // cgroup freezer refuses under load is tried again (up to 10 times): room for both.
    120_000,
    200,
  );
}

describe('compare: Ctrl+C and clusters that are not ours', { timeout: 300_000 }, () => {
  useQuorumQueue(queue);

  it('Ctrl+C while the leader is paused: the node is restored, the figures are printed, exit 130', async () => {
    const child = compareChild('pause', '5m');
    // Wait until one of the nodes is paused: the fault is on. Whatever happens, the child does not outlive the test.
    let paused: string;
    try {
      paused = await faultedNode((st) => st.Paused, 'paused');
    } catch (err) {
      child.kill('SIGKILL');
      const r = await child;
      throw new Error(`${(err as Error).message}; compare's stderr:\n${String(r.stderr)}`);
    }
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(130);
    const doc = parseJson<{ interrupted: boolean; partial: { producer: { written: number; interrupted: boolean } } | null }>({
      exitCode: r.exitCode ?? -1,
      stdout: String(r.stdout),
      stderr: String(r.stderr),
    });
    expect(doc.interrupted).toBe(true);
    expect(doc.partial?.producer.interrupted).toBe(true);
    expect(doc.partial?.producer.written).toBeGreaterThan(0);
    expect((await docker.getContainer(containerOf(paused)).inspect()).State.Paused).toBe(false);
    // Let the cluster heal before the next test.
    const up = await runCli(['cluster', 'up']);
    expect(up.exitCode, up.stderr).toBe(0);
    await withChannel((ch) => ch.purgeQueue(queue));
  });

  it('Ctrl+C during compare --hold 30s, after the election: the node is started again at once, not after the hold', async () => {
    const child = compareChild('kill', '30s');
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    try {
      // The fault is on: one node's container has stopped running.
      const killed = await faultedNode((st) => !st.Running, 'killed');
      // The election is over: the hold (--hold) is what keeps the node down now.
      // Asked of a survivor's management API (the killed node's own does not answer).
      const survivor = NODES.find((n) => n !== killed)!;
      const port = MGMT_PORTS[NODES.indexOf(survivor)];
      await eventually(
        async () => {
          const res = await fetch(`http://127.0.0.1:${port}/api/queues/%2F/${encodeURIComponent(queue)}`, {
            headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` },
            signal: AbortSignal.timeout(2_000),
          });
          const q = (await res.json()) as { leader?: string };
          if (!q.leader || q.leader === `rabbit@${killed}`) throw new Error(`leader still ${q.leader ?? 'unknown'}`);
        },
        25_000,
        200,
      );
      // And compare has seen it too (its line for the election): the Ctrl+C lands in the hold,
      // not in compare's own watch for the leader, which polls on its own clock.
      await eventually(
        async () => {
          if (!stderr.includes('new leader')) throw new Error(`compare has not reported the election yet:\n${stderr}`);
        },
        25_000,
        100,
      );
      expect((await docker.getContainer(containerOf(killed)).inspect()).State.Running).toBe(false);
      child.kill('SIGINT');
      const r = await child;
      expect(r.exitCode, String(r.stderr)).toBe(130);
      const doc = parseJson<{
        interrupted: boolean;
        partial: { fault: { node: string; newLeader: string | null; restoredAtMs: number | null } | null } | null;
      }>({
        exitCode: r.exitCode ?? -1,
        stdout: String(r.stdout),
        stderr: String(r.stderr),
      });
      expect(doc.interrupted).toBe(true);
      expect(doc.partial?.fault?.node).toBe(killed);
      newLeaderElected(doc.partial?.fault?.newLeader, killed);
      // Once seen null (one CI run, five busy clusters), cause not found: stderr says what the restore did.
      expect(doc.partial?.fault?.restoredAtMs, String(r.stderr)).not.toBeNull();
      // Started again before the hold would have ended: the kill and the start, as Docker recorded them.
      const state = (await docker.getContainer(containerOf(killed)).inspect()).State;
      expect(state.Running).toBe(true);
      const downMs = Date.parse(state.StartedAt) - Date.parse(state.FinishedAt);
      process.stderr.write(`Ctrl+C during the 30 s hold: the node was down ${downMs} ms\n`);
      expect(downMs).toBeGreaterThan(0);
      // Measured 1,155 and 1,160 ms (printed above); the hold would have kept it down 30 s.
      expect(downMs).toBeLessThan(30_000);
    } finally {
      child.kill('SIGKILL');
      await child.catch(() => undefined);
      // Let the cluster heal before the next test.
      const up = await runCli(['cluster', 'up']);
      expect(up.exitCode, up.stderr).toBe(0);
    }
  });

  it('a broker named by --management-urls that does not answer: one line with its address and the real cause, no hint for our cluster, exit 68', async () => {
    const [amqpPort, mgmtPort] = [await closedPort(), await closedPort()];
    for (const command of ['compare', 'chaos'] as const) {
      const r = await runCli(
        [command, '--urls', `amqp://${USER}:s3cret@127.0.0.1:${amqpPort}`, '--management-urls', `http://${USER}:s3cret@127.0.0.1:${mgmtPort}`],
        // Progress lines shown: chaos says its seed only once the cluster answers.
        { timeoutMs: 60_000, env: { RMQ_BENCH_QUIET: '0' } },
      );
      expect(r.exitCode, r.stderr).toBe(68);
      expect(r.stdout).toBe('');
      // One line, the error's.
      expect(r.stderr.trim().split('\n'), r.stderr).toEqual([expect.stringMatching(/^rmq-bench: /)]);
      expect(r.stderr).toContain(`127.0.0.1:${mgmtPort}: ECONNREFUSED`);
      expect(r.stderr).toContain('--management-urls');
      expect(r.stderr).not.toContain('cluster up');
      expect(r.stdout + r.stderr).not.toContain('s3cret');
    }
  });

  it('--urls, --management-urls and --fault-cmd run the same experiment without dockerode', async () => {
    const urls = AMQP_URLS.join(',');
    const mgmt = MGMT_URLS.join(',');
    const r = await runCli([
      'compare',
      '--confirms',
      'on',
      '--queue',
      queue,
      '-n',
      '3000',
      '--fault',
      'kill',
      '--urls',
      urls,
      '--management-urls',
      mgmt,
      '--fault-cmd',
      // This shard's containers only ({host} is rabbit1..3; the second cluster's are prefixed).
      `docker kill --signal KILL ${CONTAINER_PREFIX}{host}`,
      '--restore-cmd',
      `docker start ${CONTAINER_PREFIX}{host}`,
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const c = parseJson<{
      ok: boolean;
      runs: {
        leaderAtStart: string;
        fault: { node: string; newLeader: string | null; error: string | null };
        reconciliation: {
          lost: number;
          counts: { readDistinct: number; readTotal: number };
          order: {
            reads: number;
            outOfOrder: number;
            expected: number;
            unexplained: number;
            largestGap: number;
            samples: number[];
            streams: { queue: string | null; consumer: number | null; reads: number }[];
          };
        };
      }[];
    }>(r);
    const run = c.runs[0]!;
    expect(run.fault.error).toBeNull();
    expect(run.fault.node).toBe(run.leaderAtStart);
    newLeaderElected(run.fault.newLeader, run.leaderAtStart);
    expect(run.reconciliation.lost).toBe(0);
    expect(run.reconciliation.counts.readDistinct).toBe(3000);
    // The order the drain read the run in: every read of the run's ids, in one stream (this queue,
    // one reader). Every message was read, so each sequence a jump skipped was read later, out of
    // order: no gap is longer than the reads out of order.
    const o = run.reconciliation.order;
    expect(o.reads).toBe(run.reconciliation.counts.readTotal);
    expect(o.streams.map((s) => [s.queue, s.consumer, s.reads])).toEqual([[queue, null, o.reads]]);
    expect(o.expected + o.unexplained).toBe(o.outOfOrder);
    expect(o.largestGap).toBeLessThanOrEqual(o.outOfOrder);
    // Through a leader kill the quorum queue delivers one publisher's messages in publish order,
    // but for what was redelivered or sent again (the in-doubt messages republished after the reconnect).
    expect(o.unexplained, `unexplained, first sequences ${o.samples.join(', ')}`).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(`${USER}:${PASSWORD}@`);
  });
});
