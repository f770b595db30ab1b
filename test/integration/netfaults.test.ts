import type amqp from 'amqplib';
import Docker from 'dockerode';
import { execa } from 'execa';
import { spawnSync } from 'node:child_process';
import { access } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, mgmtGet, PASSWORD, parseJson, runCli, USER, uniqueName, withChannel, NODES, CONTAINERS, AMQP_PORTS } from './cli.js';
import { ELECTION_WITHIN_MS, newLeaderElected, compareArgv } from './compare-checks.js';
import { inNetns, netLeftovers } from './fixtures.js';

interface FailoverJson {
  fault: string;
  oldLeader: string;
  newLeader: string | null;
  electionMs: number | null;
  netem: { delayMs: number; jitterMs: number; lossPct: number } | null;
  restored: boolean;
  onlineAfter: string[] | null;
}

const queue = uniqueName('netfaults');
const docker = new Docker();

/**
 * Which branch each test takes is decided before the tests are named, and the names say it.
 * On Linux as root (this machine, CI) the partitions must be applied and healed: a host check
 * that fails there fails the tests, never falls back to the refusal. Latency needs the kernel's
 * netem as well (this machine's kernel has none): without it, only its refusal is checked.
 * Anywhere else (not root, not Linux) the tests that apply a fault are skipped, visibly (it.skipIf:
 * the run counts them), and one test checks that each fault is refused up front. In CI (CI set)
 * not being root on Linux fails the file.
 */
const ROOT_ON_LINUX = process.platform === 'linux' && process.getuid?.() === 0;

/** The kernel's netem qdisc, tried on the host's loopback (added and removed at once). */
function kernelHasNetem(): boolean {
  if (spawnSync('tc', ['qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '0ms']).status !== 0) return false;
  spawnSync('tc', ['qdisc', 'del', 'dev', 'lo', 'root']);
  return true;
}
const NETEM = ROOT_ON_LINUX && kernelHasNetem();
const PARTITION_BRANCH = ROOT_ON_LINUX ? 'applied and healed' : 'skipped: not root on Linux';
const LATENCY_BRANCH = NETEM ? 'applied and healed' : ROOT_ON_LINUX ? 'refusal only: this kernel has no netem' : 'skipped: not root on Linux';
process.stderr.write(`netfaults: partition ${PARTITION_BRANCH}; latency ${LATENCY_BRANCH}\n`);

/**
 * What the host offers for network faults (nsenter, iptables, tc, ip, and the containers' network
 * namespaces visible: not Docker Desktop's VM): one line per thing missing, empty when all is there.
 */
async function netFaultGaps(): Promise<string[]> {
  const gaps: string[] = [];
  for (const tool of ['nsenter', 'iptables', 'tc', 'ip']) {
    if ((await execa('sh', ['-c', `command -v ${tool}`], { reject: false })).exitCode !== 0) gaps.push(`no ${tool} on the PATH`);
  }
  const pid = (await docker.getContainer(CONTAINERS[0]!).inspect()).State.Pid;
  await access(`/proc/${pid}/ns/net`).catch(() => gaps.push(`the containers' network namespaces are not visible (/proc/${pid}/ns/net)`));
  return gaps;
}

async function expectRefused(args: string[], kind: string): Promise<void> {
  const r = await runCli(args);
  expect(r.exitCode, r.stderr).toBe(69);
  expect(r.stdout).toBe('');
  expect(r.stderr.trim().split('\n')).toEqual([expect.stringContaining(`'${kind}' needs`)]);
}

async function leaderOf(q: string): Promise<string> {
  return eventually(async () => {
    const info = await mgmtGet<{ leader?: string; online?: string[] }>(`/api/queues/%2F/${encodeURIComponent(q)}`);
    if (!info.leader || (info.online ?? []).length < 3) throw new Error(`queue ${q}: leader ${info.leader}, online ${info.online}`);
    return info.leader.replace('rabbit@', '');
  }, 60_000);
}

describe(`network faults: partition (${PARTITION_BRANCH}), latency (${LATENCY_BRANCH})`, { timeout: 300_000 }, () => {
  beforeAll(async () => {
    // In CI the faults must be applied: not being root on Linux fails the file there.
    if (process.env.CI) expect(ROOT_ON_LINUX, 'CI runs as root on Linux, where the network faults are applied').toBe(true);
    // Linux as root: every tool must be there; a gap fails the tests instead of a silent refusal.
    if (ROOT_ON_LINUX) expect(await netFaultGaps(), 'Linux as root: the network faults must be applicable here').toEqual([]);
    await withChannel((ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
  });
  afterAll(async () => {
    await withChannel((ch) => ch.deleteQueue(queue)).catch(() => undefined);
  });

  // Not root on Linux: the faults cannot be applied, and the tests that apply them are skipped (the
  // run counts them as skipped). What is checked instead is that each is refused up front. In CI
  // this never runs: the beforeAll above fails the file.
  it.runIf(!ROOT_ON_LINUX)('not root on Linux: every network fault is refused up front with one line, exit 69, nothing applied', async () => {
    await expectRefused(['failover', '--queue', queue, '--fault', 'partition'], 'partition');
    await expectRefused(['compare', '--confirms', 'on', '--queue', queue, '--fault', 'partition'], 'partition');
    await expectRefused(['failover', '--queue', queue, '--fault', 'latency'], 'latency');
    await expectRefused(['failover', '--queue', queue, '--fault', 'partition-halves', '--no-restore'], 'partition-halves');
    await expectRefused(['failover', '--queue', queue, '--fault', 'slow-link'], 'slow-link');
    await expectRefused(['failover', '--queue', queue, '--fault', 'partition-bridge'], 'partition-bridge');
  });

  it.skipIf(!ROOT_ON_LINUX)(
    `partition (${PARTITION_BRANCH}): a new leader is elected among the peers while the old leader’s client stays connected; every rule is removed`,
    async () => {
      const leader = await leaderOf(queue);
      const { default: amqplib } = await import('amqplib');
      // A client of the leader's node, on its own port: the partition must not cut it off.
      const conn: amqp.ChannelModel = await amqplib.connect(`amqp://${USER}:${PASSWORD}@127.0.0.1:${AMQP_PORTS[NODES.indexOf(leader)]}?heartbeat=2`);
      let closed: string | undefined;
      conn.on('error', () => undefined);
      conn.on('close', (err?: Error) => {
        closed = err?.message ?? 'closed';
      });
      try {
        const running = runCli(['failover', '--queue', queue, '--fault', 'partition', '--hold', '12s', '--json']);
        // While it holds: our rules are in the leader's namespace, and nowhere else.
        await eventually(async () => expect((await inNetns(leader, ['iptables', '-S'])).match(/rmq-bench/g)?.length ?? 0).toBe(4), 30_000, 200);
        for (const n of NODES.filter((x) => x !== leader)) expect(await inNetns(n, ['iptables', '-S'])).not.toContain('rmq-bench');
        const r = await running;
        expect(r.exitCode, r.stderr).toBe(0);
        const f = parseJson<FailoverJson>(r);
        expect(f.fault).toBe('partition');
        expect(f.oldLeader).toBe(leader);
        newLeaderElected(f.newLeader, leader);
        expect(f.electionMs).toBeGreaterThan(0);
        expect(f.electionMs).toBeLessThanOrEqual(ELECTION_WITHIN_MS.partition!);
        expect(f.restored).toBe(true);
        expect(f.onlineAfter).toHaveLength(3);
        // Through the partition (heartbeats every 2 s) and after it, the client's connection stayed open and works.
        expect(closed).toBeUndefined();
        const ch = await conn.createChannel();
        expect((await ch.checkQueue(queue)).queue).toBe(queue);
        await ch.close();
        expect(await netLeftovers()).toEqual([]);
      } finally {
        await conn.close().catch(() => undefined);
      }
    },
  );

  it.skipIf(!ROOT_ON_LINUX)(
    `compare under a partition (${PARTITION_BRANCH}): the producer gives up its live but silent connection to the partitioned leader and gets confirms from the healthy side while the partition lasts`,
    async () => {
      const r = await runCli(compareArgv({ queue, n: 4000, rate: 200, fault: 'partition', faultAt: 0.05, hold: '40s' }));
      expect(r.exitCode, r.stderr).toBe(0);
      const c = parseJson<{
        ok: boolean;
        runs: {
          producer: { events: { atMs: number; type: string; detail: string }[]; samples: { tMs: number; confirmed: number }[] };
          fault: { appliedAtMs: number; restoredAtMs: number; error: string | null };
          reconciliation: { lost: number; counts: { readDistinct: number; unexpected: number } };
        }[];
      }>(r);
      expect(c.ok).toBe(true);
      const run = c.runs[0]!;
      expect(run.fault.error).toBeNull();
      const gaveUp = run.producer.events.find((e) => e.type === 'connection-lost' && e.detail.includes('on a live connection'));
      expect(gaveUp, JSON.stringify(run.producer.events.slice(0, 20))).toBeDefined();
      expect(gaveUp!.atMs).toBeGreaterThan(run.fault.appliedAtMs);
      expect(gaveUp!.atMs).toBeLessThan(run.fault.restoredAtMs);
      // Confirms came again before the partition was healed.
      const confirmedAt = (t: number): number => run.producer.samples.filter((s) => s.tMs <= t).at(-1)?.confirmed ?? 0;
      expect(confirmedAt(run.fault.restoredAtMs)).toBeGreaterThan(confirmedAt(gaveUp!.atMs));
      expect(run.reconciliation.lost).toBe(0);
      expect(run.reconciliation.counts.unexpected).toBe(0);
      expect(run.reconciliation.counts.readDistinct).toBe(4000);
      expect(await netLeftovers()).toEqual([]);
    },
  );

  it.skipIf(!ROOT_ON_LINUX)(
    `latency (${LATENCY_BRANCH}): netem on the leader while held (no election awaited) and removed at the restore; without netem, refused up front with one line`,
    async () => {
      const leader = await leaderOf(queue);
      const running = runCli(['failover', '--queue', queue, '--fault', 'latency', '--latency', '300ms', '--loss', '1%', '--json']);
      if (!NETEM) {
        // This machine's kernel has no sch_netem (checked above the same way): one line, exit 69, nothing applied.
        const r = await running;
        expect(r.exitCode).toBe(69);
        // --json: the error document on stdout, the one line on stderr.
        expect(parseJson(r)).toMatchObject({ kind: 'error', exitCode: 69 });
        expect(r.stderr.trim().split('\n')).toEqual([expect.stringContaining("'latency' needs the kernel's netem queueing discipline")]);
        expect(await netLeftovers()).toEqual([]);
        expect(await leaderOf(queue)).toBe(leader);
        return;
      }
      await eventually(async () => expect(await inNetns(leader, ['tc', 'qdisc', 'show'])).toMatch(/netem .*delay 300ms/), 30_000, 200);
      const r = await running;
      expect(r.exitCode, r.stderr).toBe(0);
      const f = parseJson<FailoverJson>(r);
      expect(f.fault).toBe('latency');
      expect(f.oldLeader).toBe(leader);
      expect(f.netem).toEqual({ delayMs: 300, jitterMs: 0, lossPct: 1 });
      expect(f.newLeader).toBeNull();
      expect(f.electionMs).toBeNull();
      expect(f.restored).toBe(true);
      expect(await netLeftovers()).toEqual([]);
    },
  );

  it.skipIf(!ROOT_ON_LINUX)(
    `a partition left behind (--no-restore) is removed by cluster up; partition-halves cuts the links of every node it splits (${PARTITION_BRANCH})`,
    async () => {
      const leader = await leaderOf(queue);
      const r = await runCli(['failover', '--queue', queue, '--fault', 'partition-halves', '--no-restore', '--json']);
      expect(r.exitCode, r.stderr).toBe(0);
      const f = parseJson<FailoverJson & { shape: string }>(r);
      expect(f.restored).toBe(false);
      // On 3 nodes the minority is the leader alone: its links to both others are cut, at both ends.
      const others = NODES.filter((n) => n !== leader).sort();
      expect(f.shape).toBe(`${leader} | ${others.join(' ')}`);
      newLeaderElected(f.newLeader, leader);
      expect((await inNetns(leader, ['iptables', '-S'])).match(/rmq-bench/g)?.length ?? 0).toBe(4);
      for (const n of others) expect((await inNetns(n, ['iptables', '-S'])).match(/rmq-bench/g)?.length ?? 0, n).toBe(2);
      const up = await runCli(['cluster', 'up'], { env: { RMQ_BENCH_QUIET: '0' } });
      expect(up.exitCode, up.stderr).toBe(0);
      expect(up.stderr).toContain(`${leader} had network faults left behind`);
      expect(await netLeftovers()).toEqual([]);
      await leaderOf(queue);
    },
  );

  it.skipIf(!ROOT_ON_LINUX)(
    `slow-link (${PARTITION_BRANCH}): tbf on the leader's interfaces while held, and the kernel counts packets held back by it; removed at the restore`,
    async () => {
      const leader = await leaderOf(queue);
      // Held 12 s: the checks below (the qdisc, 600 KB through it, the kernel's count) run while it
      // stands; on a loaded machine they took longer than a short hold.
      const running = runCli(['failover', '--queue', queue, '--fault', 'slow-link', '--bandwidth', '256kbit', '--hold', '12s', '--json']);
      await eventually(async () => expect(await inNetns(leader, ['tc', 'qdisc', 'show'])).toMatch(/qdisc tbf \S+ (dev \S+ )?root .*rate 256Kbit/), 30_000, 200);
      for (const n of NODES.filter((x) => x !== leader)) expect(await inNetns(n, ['tc', 'qdisc', 'show'])).not.toContain('tbf');
      // 600 KB published into the queue: its leader replicates it to two followers through the limit.
      // A plain channel, closed once written: confirms would wait on the slow link itself.
      const { default: amqplib } = await import('amqplib');
      const conn = await amqplib.connect(`amqp://${USER}:${PASSWORD}@127.0.0.1:${AMQP_PORTS[0]}`);
      const ch = await conn.createChannel();
      for (let i = 0; i < 300; i++) ch.sendToQueue(queue, Buffer.alloc(2_048, 1), { persistent: true });
      await ch.close();
      await conn.close();
      const overlimits = await eventually(
        async () => {
          const stats = await inNetns(leader, ['tc', '-s', 'qdisc', 'show']);
          const n = Math.max(0, ...[...stats.matchAll(/overlimits (\d+)/g)].map((m) => Number(m[1])));
          expect(n, stats).toBeGreaterThan(0);
          return n;
        },
        8_000,
        250,
      );
      expect(overlimits).toBeGreaterThan(0);
      const r = await running;
      expect(r.exitCode, r.stderr).toBe(0);
      const f = parseJson<FailoverJson & { bandwidth: string | null }>(r);
      expect(f.fault).toBe('slow-link');
      expect(f.bandwidth).toBe('256kbit');
      expect(f.newLeader, 'no election awaited').toBeNull();
      expect(f.restored).toBe(true);
      expect(await netLeftovers()).toEqual([]);
      await withChannel((ch) => ch.purgeQueue(queue));
    },
  );

  it.skipIf(!ROOT_ON_LINUX)(
    `partition-bridge (${PARTITION_BRANCH}): two nodes cut from each other, the third reaching both; the leader keeps a majority; every rule removed at the restore. partition-ring on 3 nodes: one line, exit 2`,
    async () => {
      const ring = await runCli(['failover', '--queue', queue, '--fault', 'partition-ring']);
      expect(ring.exitCode, ring.stderr).toBe(2);
      expect(ring.stdout).toBe('');
      expect(ring.stderr.trim().split('\n')).toEqual([expect.stringContaining("'partition-ring' needs a cluster of 5 nodes; this one has 3")]);
      const leader = await leaderOf(queue);
      // Held 8 s: the rules are read while they stand (three containers in turn; slow when the machine is loaded).
      const running = runCli(['failover', '--queue', queue, '--fault', 'partition-bridge', '--hold', '8s', '--json']);
      // While it holds: two rules (in and out) at each end of the one cut link, none on the bridge.
      const cut = await eventually(
        async () => {
          const counts = await Promise.all(NODES.map(async (n) => (await inNetns(n, ['iptables', '-S'])).match(/rmq-bench/g)?.length ?? 0));
          expect([...counts].sort()).toEqual([0, 2, 2]);
          return NODES.filter((_, i) => counts[i] === 2);
        },
        30_000,
        200,
      );
      expect(cut).toContain(leader);
      const r = await running;
      expect(r.exitCode, r.stderr).toBe(0);
      const f = parseJson<FailoverJson & { shape: string }>(r);
      expect(f.fault).toBe('partition-bridge');
      const bridge = NODES.find((n) => !cut.includes(n))!;
      expect(f.shape.split(' | ')[1]).toBe(bridge);
      expect(f.newLeader, 'no election awaited: the leader reaches the bridge, a majority').toBeNull();
      expect(f.restored).toBe(true);
      expect(f.onlineAfter).toHaveLength(3);
      expect(await netLeftovers()).toEqual([]);
    },
  );
});
