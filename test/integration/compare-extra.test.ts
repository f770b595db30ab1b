import Docker from 'dockerode';
import { execa } from 'execa';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, parseJson, PASSWORD, ROOT, runCli, uniqueName, USER, withChannel } from './cli.js';

const queue = uniqueName('compare-extra');

describe('compare: Ctrl+C and clusters that are not ours', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    await withChannel((ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
  });
  afterAll(async () => {
    await withChannel((ch) => ch.deleteQueue(queue)).catch(() => undefined);
  });

  it('Ctrl+C while the leader is paused: the node is restored, the figures are printed, exit 130', async () => {
    const docker = new Docker();
    const child = execa(
      'node',
      [
        path.join(ROOT, 'bin', 'rmq-bench.js'),
        'compare',
        '--mode',
        'on',
        '--queue',
        queue,
        '-n',
        '100000',
        '--rate',
        '500',
        '--fault',
        'pause',
        '--fault-at',
        '0.01',
        '--restore-after',
        '5m',
        '--json',
      ],
      { cwd: ROOT, reject: false, stdin: 'ignore', env: { RMQ_BENCH_QUIET: '1' } },
    );
    // Wait until one of the nodes is paused: the fault is on. Whatever happens, the child does not outlive the test.
    let paused: string;
    try {
      paused = await eventually(
        async () => {
          for (const n of ['rabbit1', 'rabbit2', 'rabbit3']) {
            if ((await docker.getContainer(n).inspect()).State.Paused) return n;
          }
          throw new Error('no node paused yet');
        },
        60_000,
        200,
      );
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
    expect((await docker.getContainer(paused).inspect()).State.Paused).toBe(false);
    // Let the cluster heal before the next test.
    const up = await runCli(['cluster', 'up']);
    expect(up.exitCode, up.stderr).toBe(0);
    await withChannel((ch) => ch.purgeQueue(queue));
  });

  it('--urls, --management-url and --fault-cmd run the same experiment without dockerode', async () => {
    const urls = [5672, 5673, 5674].map((p) => `amqp://${USER}:${PASSWORD}@127.0.0.1:${p}`).join(',');
    const mgmt = [15672, 15673, 15674].map((p) => `http://${USER}:${PASSWORD}@127.0.0.1:${p}`).join(',');
    const r = await runCli([
      'compare',
      '--mode',
      'on',
      '--queue',
      queue,
      '-n',
      '3000',
      '--fault',
      'kill',
      '--urls',
      urls,
      '--management-url',
      mgmt,
      '--fault-cmd',
      'docker kill --signal KILL {host}',
      '--restore-cmd',
      'docker start {host}',
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const c = parseJson<{
      ok: boolean;
      runs: {
        leaderAtStart: string;
        fault: { node: string; newLeader: string; error: string | null };
        reconciliation: { lost: number; counts: { readDistinct: number } };
      }[];
    }>(r);
    const run = c.runs[0]!;
    expect(run.fault.error).toBeNull();
    expect(run.fault.node).toBe(run.leaderAtStart);
    expect(run.fault.newLeader).not.toBe(run.leaderAtStart);
    expect(run.reconciliation.lost).toBe(0);
    expect(run.reconciliation.counts.readDistinct).toBe(3000);
    expect(r.stdout + r.stderr).not.toContain(`${USER}:${PASSWORD}@`);
  });
});
