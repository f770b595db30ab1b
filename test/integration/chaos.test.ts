import Docker from 'dockerode';
import { execa } from 'execa';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, mgmtGet, parseJson, ROOT, runCli, uniqueName, NODES, containerOf, MGMT } from './cli.js';
import { schemaChecked } from './schema.js';
import { type ChaosJson, chaosAgreesWithTheStore } from './chaos-checks.js';

const docker = new Docker();

async function queueNames(): Promise<string[]> {
  return (await mgmtGet<{ name: string }[]>('/api/queues?columns=name')).map((q) => q.name);
}

describe('chaos: traffic both ways under a nemesis, every message reconciled', { timeout: 400_000 }, () => {
  it('a short run with a fixed seed: the three planned faults, each healed; every producer’s reads match the consumers’ store; nothing confirmed is lost', async () => {
    const prefix = uniqueName('chaos');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-it-'));
    const store = path.join(dir, 'processed.db');
    const ledgerFile = path.join(dir, 'ledgers.json');
    const r = await runCli(
      [
        'chaos',
        // Exactly three faults (--fault-count), the first at 10 s, then 12 s after each one began
        // (or at once, if healing it took longer); traffic until 40 s and the third is healed.
        // Seed 10 over kill and pause: every target, and one node restart (4 to 6 CPU-s of the
        // machine each; stop runs in leader-faults.test.ts), the control producer's node's.
        '--duration',
        '40s',
        '--interval',
        '12s',
        '--hold',
        '3s',
        '--fault-count',
        '3',
        '--faults',
        'kill,pause',
        '--seed',
        '10',
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
      { timeoutMs: 380_000 },
    );
    const doc = parseJson<ChaosJson>(r);
    expect(r.exitCode, `${r.stderr}\n${doc.reasons.join('\n')}`).toBe(0);
    expect(doc.ok).toBe(true);
    // The drain ended with every queue empty (nothing held unacknowledged, nothing left over).
    expect(doc.drain).toEqual({ ended: 'empty', waitedMs: expect.any(Number), left: [] });

    // Seed 10 over kill and pause and the default targets: this schedule, written out.
    expect(doc.faults.map((f) => [f.index, f.kind, f.target])).toEqual([
      [1, 'kill', 'producer'],
      [2, 'pause', 'random'],
      [3, 'pause', 'leader'],
    ]);
    for (const f of doc.faults) {
      expect(f.error).toBeNull();
      expect(f.nodes.length).toBe(1);
      expect(NODES).toContain(f.nodes[0]);
      // Held from the fault's issue (a stop takes a moment to return): --hold 3s.
      expect(f.restoredAtMs! - f.issuedAtMs).toBeGreaterThanOrEqual(2_900);
      expect(f.wholeAtMs!).toBeGreaterThan(f.restoredAtMs!);
    }
    expect(doc.availability.map((a) => a.index)).toEqual([1, 2, 3]);

    await chaosAgreesWithTheStore(doc, { store, ledgerFile }, { confirming: 2, controlQueue: `${prefix}.control` });
    // The first fault (its draw picks the third of three producers) kills the control producer's
    // node at 10 s, while it publishes until 40 s without confirms: what it had written and the
    // node had not yet taken is gone, and nothing told it. The store lacks exactly that many
    // (chaosAgreesWithTheStore); here, that it is not none. Measured at 150 msg/s: 5 and 6 lost by
    // this run's options (chaos --json), and 2 to 6 in each of 13 runs of `compare --confirms off
    // --rate 150 --fault kill` (the producer's node killed); never none.
    const controlKill = doc.faults[0]!;
    expect([controlKill.kind, controlKill.reason]).toEqual(['kill', "producer 3's node"]);
    expect(controlKill.issuedAtMs).toBeLessThan(40_000);
    expect(doc.control!.silentlyLost, 'the control producer, its node killed while it published').toBeGreaterThan(0);
    // Confirm latency in calm and under at least one fault kind.
    expect(doc.latency.find((l) => l.phase === 'calm')?.summary.count).toBeGreaterThan(0);
    expect(doc.latency.some((l) => ['kill', 'pause'].includes(l.phase) && l.summary.count > 0)).toBe(true);
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
    // Measured 136 and 313 ms (printed here) against the 90 s hold: 60 s catches a wait for it.
    process.stderr.write(`chaos: exit ${Date.now() - sentAt} ms after Ctrl+C\n`);
    expect(Date.now() - sentAt).toBeLessThan(60_000);
    const doc = schemaChecked(JSON.parse(String(r.stdout))) as ChaosJson;
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
