import Docker from 'dockerode';
import { execa } from 'execa';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, PASSWORD, parseJson, ROOT, runCli, USER, uniqueName, withChannel } from './cli.js';

const queue = uniqueName('leader-fault');

describe('the leader-fault sequence under Ctrl+C', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    await withChannel((ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
  });
  afterAll(async () => {
    await withChannel((ch) => ch.deleteQueue(queue)).catch(() => undefined);
  });

  it('Ctrl+C during compare --restore-after 30s, after the election: the node is started again at once, not after the hold', async () => {
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
        'kill',
        '--fault-at',
        '0.01',
        '--restore-after',
        '30s',
        '--json',
      ],
      { cwd: ROOT, reject: false, stdin: 'ignore', env: { RMQ_BENCH_QUIET: '1' } },
    );
    try {
      // The fault is on: one node's container has stopped running.
      const killed = await eventually(
        async () => {
          for (const n of ['rabbit1', 'rabbit2', 'rabbit3']) {
            if (!(await docker.getContainer(n).inspect()).State.Running) return n;
          }
          throw new Error('no node killed yet');
        },
        60_000,
        200,
      );
      // The election is over: the hold (--restore-after) is what keeps the node down now.
      // Asked of a survivor's management API (the killed node's own does not answer).
      const survivor = ['rabbit1', 'rabbit2', 'rabbit3'].find((n) => n !== killed)!;
      const port = 15671 + Number(survivor.slice(-1));
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
      expect((await docker.getContainer(killed).inspect()).State.Running).toBe(false);
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
      expect(doc.partial?.fault?.newLeader).not.toBeNull();
      expect(doc.partial?.fault?.restoredAtMs).not.toBeNull();
      // Started again before the hold would have ended: the kill and the start, as Docker recorded them.
      const state = (await docker.getContainer(killed).inspect()).State;
      expect(state.Running).toBe(true);
      const downMs = Date.parse(state.StartedAt) - Date.parse(state.FinishedAt);
      expect(downMs).toBeGreaterThan(0);
      expect(downMs).toBeLessThan(30_000);
    } finally {
      child.kill('SIGKILL');
      await child.catch(() => undefined);
      // Let the cluster heal before the next test.
      const up = await runCli(['cluster', 'up']);
      expect(up.exitCode, up.stderr).toBe(0);
    }
  });
});
