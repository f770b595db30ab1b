import Docker from 'dockerode';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CONTAINERS, NODES, eventually, mgmtGet, parseJson, runCli, uniqueName } from './cli.js';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ChaosJson, chaosAgreesWithTheStore } from './chaos-checks.js';
import { witnessedFaultRow } from './fault-rows.js';
import { netLeftovers, useQuorumQueue } from './fixtures.js';

/*
 * A 5-node cluster (shard f: RMQ_BENCH_NODES=5, scripts/test-integration.sh): the nodes form one
 * cluster with every quorum queue on five members, and the shape only five nodes can take, the
 * majorities ring, is applied and healed. Who reaches whom is read here from each node's own
 * iptables rules (nsenter, as the netfaults tests do) and the containers' addresses, not from
 * rmq-bench's report.
 */

const docker = new Docker();
const queue = uniqueName('five');

interface FailoverJson {
  fault: string;
  oldLeader: string;
  newLeader: string | null;
  shape: string | null;
  restored: boolean;
  onlineAfter: string[] | null;
}

async function inNetns(container: string, cmd: string[]): Promise<string> {
  const pid = (await docker.getContainer(container).inspect()).State.Pid;
  const r = await execa('nsenter', ['-t', String(pid), '-n', ...cmd], { reject: false });
  if (r.exitCode !== 0) throw new Error(`nsenter ${cmd.join(' ')} in ${container}: exit ${r.exitCode}: ${r.stderr}`);
  return r.stdout;
}

/** Each node → the nodes whose address its rmq-bench rules drop (both directions are checked). */
async function cutFrom(): Promise<Map<string, string[]>> {
  const ipOf = new Map<string, string>();
  for (const [i, c] of CONTAINERS.entries()) {
    const nets = (await docker.getContainer(c).inspect()).NetworkSettings.Networks ?? {};
    ipOf.set(Object.values(nets)[0]!.IPAddress, NODES[i]!);
  }
  const cuts = new Map<string, string[]>();
  for (const [i, c] of CONTAINERS.entries()) {
    const rules = (await inNetns(c, ['iptables', '-S'])).split('\n').filter((l) => l.includes('rmq-bench'));
    const inbound = rules.flatMap((l) => /-A INPUT -s (\S+?)(\/32)? /.exec(l)?.[1] ?? []).map((ip) => ipOf.get(ip) ?? ip);
    const outbound = rules.flatMap((l) => /-A OUTPUT -d (\S+?)(\/32)? /.exec(l)?.[1] ?? []).map((ip) => ipOf.get(ip) ?? ip);
    expect(inbound.sort(), `${c}: in and out cut alike`).toEqual(outbound.sort());
    cuts.set(NODES[i]!, inbound.sort());
  }
  return cuts;
}

describe('a 5-node cluster', { timeout: 300_000 }, () => {
  useQuorumQueue(queue);

  it('cluster up --nodes 5: five nodes in one cluster, by the broker, and a quorum queue on all five', async () => {
    expect(NODES).toEqual(['rabbit1', 'rabbit2', 'rabbit3', 'rabbit4', 'rabbit5']);
    const nodes = await mgmtGet<{ name: string; running: boolean }[]>('/api/nodes');
    expect(
      nodes
        .filter((n) => n.running)
        .map((n) => n.name)
        .sort(),
    ).toEqual(NODES.map((n) => `rabbit@${n}`));
    await eventually(async () => {
      const q = await mgmtGet<{ members: string[]; online: string[] }>(`/api/queues/%2F/${encodeURIComponent(queue)}`);
      expect(q.online).toHaveLength(5);
    }, 30_000);
    const status = parseJson<{ nodes: unknown[] }>(await runCli(['cluster', 'status', '--json']));
    expect(status.nodes).toHaveLength(5);
  });

  it('partition-ring: every node cut from exactly the two that are not its neighbours, so each reaches a majority and no two the same one; all of it removed at the restore', async () => {
    // Held 20 s: the rules are read while they stand, five containers in turn, which on a loaded
    // machine took longer than a 1 s hold (the reads then saw half a ring, or its removal).
    const running = runCli(['failover', '--queue', queue, '--fault', 'partition-ring', '--hold', '20s', '--json']);
    const cuts = await eventually(
      async () => {
        const c = await cutFrom();
        for (const n of NODES) expect(c.get(n), n).toHaveLength(2);
        return c;
      },
      30_000,
      250,
    );
    // Each node reaches itself and two others; the five reach sets differ: a ring, no two alike.
    const reach = NODES.map((n) => NODES.filter((m) => !cuts.get(n)!.includes(m)).join(','));
    expect(new Set(reach).size).toBe(5);
    for (const [n, cut] of cuts) for (const m of cut) expect(cuts.get(m), `${n} cut from ${m}, and ${m} from ${n}`).toContain(n);
    const r = await running;
    expect(r.exitCode, r.stderr).toBe(0);
    const f = parseJson<FailoverJson>(r);
    expect(f.fault).toBe('partition-ring');
    // The report's ring is the one the rules drew: neighbours in it are never cut from each other.
    const ring = f.shape!.replace(/^ring /, '').split('-');
    expect(ring).toHaveLength(6);
    for (let i = 0; i < 5; i++) expect(cuts.get(ring[i]!)).not.toContain(ring[i + 1]);
    expect(f.newLeader, 'no election awaited: the leader reaches a majority').toBeNull();
    expect(f.restored).toBe(true);
    expect(f.onlineAfter).toHaveLength(5);
    for (const c of CONTAINERS) expect(await inNetns(c, ['iptables', '-S'])).not.toContain('rmq-bench');
  });

  // The README's ring row under traffic (measured: no election, longest stall 0.1-0.5 s): each
  // node reaches a majority, so the leader keeps one; a stall of 20 s would be an election's.
  it("partition-ring under compare --confirms on: 0 confirmed lost by the broker's ids, no election, the producer never stalled 20 s, nothing left behind", async () => {
    await witnessedFaultRow(queue, { fault: 'partition-ring', elected: false, electionWithinMs: null, stallWithinMs: 20_000 });
  });

  // rabbitmq/jepsen's schedule (--profile jepsen: a partition of a random shape every 20 s of
  // calm, held 10 s), shortened to 70 s: the README's Jepsen figure, by the consumers' store read
  // with the test's own SQL and the confirmed ids of --ledger's file.
  it("chaos --profile jepsen, 70 s: every fault a partition held 10 s and healed; every confirmed id in the store; the control producer's silent loss exactly what the store lacks; nothing left behind", {
    timeout: 420_000,
  }, async () => {
    const prefix = uniqueName('jepsen');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-it-jepsen-'));
    const store = path.join(dir, 'processed.db');
    const ledgerFile = path.join(dir, 'ledgers.json');
    const r = await runCli(
      [
        'chaos',
        '--profile',
        'jepsen',
        '--duration',
        '70s',
        '--seed',
        '7',
        '--producers',
        '2',
        '--consumers',
        '2',
        '--queues',
        '2',
        '--rate',
        '150',
        '--control',
        '--queue-prefix',
        prefix,
        '--store',
        store,
        '--ledger',
        ledgerFile,
        '--json',
      ],
      { timeoutMs: 400_000 },
    );
    const doc = parseJson<ChaosJson>(r);
    expect(r.exitCode, `${r.stderr}\n${doc.reasons.join('\n')}`).toBe(0);
    expect(doc.ok).toBe(true);
    expect(doc.drain).toEqual({ ended: 'empty', waitedMs: expect.any(Number), left: [] });
    expect(doc.faults.length).toBeGreaterThanOrEqual(2);
    for (const f of doc.faults) {
      expect(f.kind).toMatch(/^partition/);
      expect(f.error).toBeNull();
      expect(f.restoredAtMs! - f.issuedAtMs, `fault ${f.index} held 10 s`).toBeGreaterThanOrEqual(9_900);
      expect(f.wholeAtMs!).toBeGreaterThan(f.restoredAtMs!);
    }
    await chaosAgreesWithTheStore(doc, { store, ledgerFile }, { confirming: 2, controlQueue: `${prefix}.control` });
    expect(await netLeftovers()).toEqual([]);
    const left = (await mgmtGet<{ name: string }[]>('/api/queues?columns=name')).map((q) => q.name).filter((q) => q.startsWith(prefix));
    expect(left).toEqual([]);
  });
});
