import Docker from 'dockerode';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTAINERS, ROOT, runCli } from './cli.js';
import { expectClusterWhole } from './fixtures.js';

/*
 * A clone never trusts another clone's containers. The nodes mount cluster/ from the checkout
 * that made them; containers made by another clone, since deleted, answered "already up", and
 * their next restart failed on the missing mount. `cluster up` makes them again from its own files.
 */

const docker = new Docker();

/** Where each node's cluster files come from (the bind mount at /etc/rmq-bench), read from docker. */
async function filesFrom(): Promise<string[]> {
  return Promise.all(
    CONTAINERS.map(async (c) => {
      const info = await docker.getContainer(c).inspect();
      return info.Mounts.find((m) => m.Destination === '/etc/rmq-bench')?.Source ?? 'none';
    }),
  );
}

describe("a clone never trusts another clone's containers", { timeout: 900_000 }, () => {
  it('containers made from another clone are made again from this checkout, and again once that clone is deleted; a node restart works after', async () => {
    const clone = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-other-clone-'));
    try {
      cpSync(path.join(ROOT, 'cluster'), path.join(clone, 'cluster'), { recursive: true });
      cpSync(path.join(ROOT, 'docker-compose.yml'), path.join(clone, 'docker-compose.yml'));
      const there = await runCli(['cluster', 'up'], { env: { RMQ_BENCH_PROJECT_ROOT: clone, RMQ_BENCH_QUIET: '0' }, timeoutMs: 600_000 });
      expect(there.exitCode, there.stderr).toBe(0);
      expect(there.stderr).toContain(`was made from another checkout (${path.join(ROOT, 'cluster')})`);
      expect(await filesFrom()).toEqual(CONTAINERS.map(() => path.join(clone, 'cluster')));
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
    // The other clone is gone, and its containers still run: not "already up".
    const here = await runCli(['cluster', 'up'], { env: { RMQ_BENCH_QUIET: '0' }, timeoutMs: 600_000 });
    expect(here.exitCode, here.stderr).toBe(0);
    expect(here.stderr).toContain(`was made from ${path.join(clone, 'cluster')}, which no longer exists`);
    expect(here.stderr).not.toContain('cluster already up');
    expect(await filesFrom()).toEqual(CONTAINERS.map(() => path.join(ROOT, 'cluster')));
    // The restart that failed on the missing mount.
    await docker.getContainer(CONTAINERS[0]!).restart({ t: 10 });
    const after = await runCli(['cluster', 'up'], { timeoutMs: 600_000 });
    expect(after.exitCode, after.stderr).toBe(0);
    await expectClusterWhole('demo.orders');
  });
});
