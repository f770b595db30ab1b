import Docker from 'dockerode';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CONTAINERS, eventually, runCli } from './cli.js';

/*
 * A node whose container exits while `cluster up` waits for it (a boot that fails: on 3.10 under
 * load, after compose made the containers again) never becomes healthy by itself. cluster up
 * starts it again and says so, instead of waiting out its deadline. Planted here: the node is
 * killed, cluster up starts it (compose), and it is killed again while it boots. Whether the
 * cluster is whole is read from another node's own cluster_status, not from rmq-bench.
 */

const docker = new Docker();
const victim = CONTAINERS.at(-1)!;
const witness = CONTAINERS[0]!;

async function startedAt(): Promise<{ running: boolean; startedAt: string }> {
  const s = (await docker.getContainer(victim).inspect()).State;
  return { running: s.Running, startedAt: s.StartedAt };
}

describe('cluster up and a node that exits while it boots', { timeout: 420_000 }, () => {
  it('starts the exited node again, names why it exited, and ends with every node running in one cluster', async () => {
    await docker.getContainer(victim).kill();
    const before = (await startedAt()).startedAt;
    const up = runCli(['cluster', 'up'], { timeoutMs: 400_000, env: { RMQ_BENCH_QUIET: '0' } });
    // compose starts it again: killed once more as soon as it runs, long before its boot ends.
    await eventually(
      async () => {
        const s = await startedAt();
        expect(s.running).toBe(true);
        expect(s.startedAt).not.toBe(before);
      },
      180_000,
      100,
    );
    await docker.getContainer(victim).kill();
    const r = await up;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`${victim} exited \\(exit code 137.*; starting it again`));

    const status = await execa('docker', ['exec', witness, 'rabbitmqctl', 'cluster_status', '--formatter', 'json'], { reject: false });
    expect(status.exitCode, status.stderr).toBe(0);
    const s = JSON.parse(status.stdout) as { running_nodes: string[]; partitions: Record<string, string[]> };
    expect(s.running_nodes).toHaveLength(CONTAINERS.length);
    expect(Object.keys(s.partitions)).toEqual([]);
    expect((await startedAt()).running).toBe(true);
  });
});
