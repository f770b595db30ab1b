import Docker from 'dockerode';
import { execa } from 'execa';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nemesisSchedule } from '../../src/scenarios/chaos-plan.js';
import { eventually, mgmtGet, parseJson, ROOT, runCli, uniqueName, NODES, containerOf, MGMT } from './cli.js';

/** The parts of chaos's JSON document these tests read. */
interface ChaosJson {
  ok: boolean;
  reasons: string[];
  interrupted: boolean;
  unexpected: number;
  absorbed: number;
  totals: { attempted: number; confirmed: number; read: number; lost: number; duplicated: number };
  control: { attempted: number; written: number; read: number; silentlyLost: number } | null;
  producers: {
    producer: number;
    confirms: boolean;
    queue: string;
    reconciliation: {
      lost: number;
      silentlyLost: number;
      knownFailed: number;
      indeterminateUnread: number;
      neverWritten: number;
      counts: { attempted: number; readDistinct: number; confirmed: number };
    };
  }[];
  consumers: { consumer: number; queue: string; processed: number; duplicatesSkipped: number }[];
  faults: {
    index: number;
    kind: string;
    target: string;
    nodes: string[];
    issuedAtMs: number;
    appliedAtMs: number | null;
    restoredAtMs: number | null;
    wholeAtMs: number | null;
    error: string | null;
  }[];
  availability: { index: number; stallMs: number }[];
  latency: { phase: string; summary: { count: number } }[];
  samples: { tMs: number; written: number; confirmed: number; consumed: number }[];
  queues: { name: string }[];
}

const docker = new Docker();

async function queueNames(): Promise<string[]> {
  return (await mgmtGet<{ name: string }[]>('/api/queues?columns=name')).map((q) => q.name);
}

describe('chaos: traffic both ways under a nemesis, every message reconciled', { timeout: 400_000 }, () => {
  it('a short run with a fixed seed: the planned faults, each healed; every producer’s ledger adds up; nothing confirmed is lost', async () => {
    const prefix = uniqueName('chaos');
    const faults = ['kill', 'pause', 'stop'];
    const r = await runCli(
      [
        'chaos',
        '--duration',
        '45s',
        '--interval',
        '14s',
        '--hold',
        '3s',
        '--faults',
        faults.join(','),
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
        '--json',
      ],
      { timeoutMs: 380_000 },
    );
    const doc = parseJson<ChaosJson>(r);
    expect(r.exitCode, `${r.stderr}\n${doc.reasons.join('\n')}`).toBe(0);
    expect(doc.ok).toBe(true);

    // The schedule is the seed's: the same kinds in the same order.
    expect(doc.faults.length).toBeGreaterThanOrEqual(2);
    const planned = nemesisSchedule(7, faults as never, ['leader', 'random', 'producer'], doc.faults.length);
    expect(doc.faults.map((f) => f.kind)).toEqual(planned.map((p) => p.kind));
    expect(doc.faults.map((f) => f.target)).toEqual(planned.map((p) => p.target));
    for (const f of doc.faults) {
      expect(f.error).toBeNull();
      expect(f.nodes.length).toBe(1);
      expect(NODES).toContain(f.nodes[0]);
      // Held from the fault's issue (a stop takes a moment to return): --hold 3s.
      expect(f.restoredAtMs! - f.issuedAtMs).toBeGreaterThanOrEqual(2_900);
      expect(f.wholeAtMs!).toBeGreaterThan(f.restoredAtMs!);
    }
    expect(doc.availability.map((a) => a.index)).toEqual(doc.faults.map((f) => f.index));

    // Each producer's accounts balance, and the totals are their sums.
    const confirming = doc.producers.filter((p) => p.confirms);
    expect(confirming.length).toBe(2);
    for (const p of doc.producers) {
      const c = p.reconciliation;
      expect(c.counts.attempted).toBeGreaterThan(1_000);
      expect(c.counts.readDistinct + c.lost + c.neverWritten + c.knownFailed + c.indeterminateUnread + c.silentlyLost).toBe(c.counts.attempted);
    }
    for (const p of confirming) expect(p.reconciliation.lost).toBe(0);
    expect(doc.totals.attempted).toBe(confirming.reduce((a, p) => a + p.reconciliation.counts.attempted, 0));
    expect(doc.totals.read).toBe(confirming.reduce((a, p) => a + p.reconciliation.counts.readDistinct, 0));
    expect(doc.totals.lost).toBe(0);
    expect(doc.unexpected).toBe(0);
    // The control producer (no confirms) is reconciled on its own queue.
    expect(doc.control).not.toBeNull();
    expect(doc.producers.find((p) => !p.confirms)?.queue).toBe(`${prefix}.control`);
    expect(doc.control!.read + doc.control!.silentlyLost).toBeLessThanOrEqual(doc.control!.attempted);
    // The consumers' deliveries cover what was read (duplicates the store skipped included).
    const delivered = doc.consumers.reduce((a, c) => a + c.processed + c.duplicatesSkipped, 0);
    expect(delivered).toBeGreaterThanOrEqual(doc.totals.read + doc.control!.read);
    expect(doc.absorbed).toBe(doc.consumers.reduce((a, c) => a + c.duplicatesSkipped, 0));
    // Confirm latency in calm and under at least one fault kind.
    expect(doc.latency.find((l) => l.phase === 'calm')?.summary.count).toBeGreaterThan(0);
    expect(doc.latency.some((l) => faults.includes(l.phase) && l.summary.count > 0)).toBe(true);
    expect(doc.samples.length).toBeGreaterThan(30);

    // Nothing is left behind: every node runs unpaused, and a run that passed deleted its queues.
    for (const n of NODES) {
      const st = (await docker.getContainer(containerOf(n)).inspect()).State;
      expect({ n, running: st.Running, paused: st.Paused }).toEqual({ n, running: true, paused: false });
    }
    const left = (await queueNames()).filter((q) => q.startsWith(prefix));
    expect(left).toEqual([]);
  });

  it('Ctrl+C while a fault is on: the node is healed at once, the figures are printed, exit 130', async () => {
    const prefix = uniqueName('chaos-int');
    const child = execa(
      'node',
      [
        path.join(ROOT, 'bin', 'rmq-bench.js'),
        'chaos',
        '--duration',
        '3m',
        '--interval',
        '2m',
        '--hold',
        '90s',
        '--faults',
        'pause',
        '--producers',
        '1',
        '--consumers',
        '1',
        '--queues',
        '1',
        '--rate',
        '100',
        '--queue-prefix',
        prefix,
        '--json',
      ],
      { cwd: ROOT, reject: false, stdin: 'ignore', env: { RMQ_BENCH_QUIET: '1' } },
    );
    let paused: string;
    try {
      paused = await eventually(
        async () => {
          for (const n of NODES) if ((await docker.getContainer(containerOf(n)).inspect()).State.Paused) return n;
          throw new Error('no node paused yet');
        },
        60_000,
        200,
      );
    } catch (err) {
      child.kill('SIGKILL');
      const r = await child;
      throw new Error(`${(err as Error).message}; chaos's stderr:\n${String(r.stderr)}`);
    }
    const sentAt = Date.now();
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(130);
    // Healed at once, not after the 90 s hold.
    expect((await docker.getContainer(containerOf(paused)).inspect()).State.Paused).toBe(false);
    expect(Date.now() - sentAt).toBeLessThan(60_000);
    const doc = JSON.parse(String(r.stdout)) as ChaosJson;
    expect(doc.interrupted).toBe(true);
    expect(doc.faults.length).toBe(1);
    expect(doc.faults[0]!.nodes).toEqual([paused]);
    expect(doc.faults[0]!.restoredAtMs).not.toBeNull();
    expect(String(r.stderr)).toMatch(/interrupted/);
    // The run did not pass, so its queue stays for inspection: remove it here.
    for (const q of (await queueNames()).filter((n) => n.startsWith(prefix)))
      await fetch(`${MGMT}/api/queues/%2F/${encodeURIComponent(q)}`, {
        method: 'DELETE',
        headers: { authorization: `Basic ${Buffer.from('demo:demo').toString('base64')}` },
      });
  });
});
