import { execa } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { CONTAINERS, droppedUnroutable, MGMT, PASSWORD, ROOT, USER } from './cli.js';
import { partCommands, runWorkshopPart } from './workshop-run.js';

/**
 * The session's cluster, for all its integration test files: `rmq-bench cluster up` (the real
 * binary), which builds the image when it is missing. No engine means a loud failure, never a skip.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = performance.now();
  await clusterUp();
  process.stderr.write(`integration: cluster ready in ${Math.round(performance.now() - started)} ms\n`);
  // What an earlier session left behind when it was killed before its teardown.
  await removeTestObjects();
  // Outcomes shared between test files of this session (the workshop's run): see workshop-run.ts.
  const sessionDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-it-session-'));
  project.provide('sessionDir', sessionDir);
  // A shard's part of the workshop runs first, on the cluster as the setup left it, before any
  // test file can leave something on it (scripts/test-integration.sh names the part).
  const part = process.env.RMQ_BENCH_WORKSHOP_PART;
  if (part !== undefined && part !== '') {
    if (partCommands(Number(part)).some((c) => c.args[0] === 'audit')) await resetDropCount();
    await runWorkshopPart(Number(part), sessionDir);
  }
  return async () => {
    rmSync(sessionDir, { recursive: true, force: true });
    if (process.env.RMQ_BENCH_KEEP_TEST_QUEUES !== '1') await removeTestObjects();
  };
}

// This session's cluster (cli.ts reads RMQ_BENCH_NAME and the ports): the default one, or one of
// the four beside it (scripts/test-integration.sh).
const AUTH = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };

/** `rmq-bench cluster up` (the real binary), which builds the image when it is missing. */
async function clusterUp(): Promise<void> {
  const r = await execa('node', [path.join(ROOT, 'bin', 'rmq-bench.js'), 'cluster', 'up'], {
    cwd: ROOT,
    reject: false,
    stdin: 'ignore',
    stdout: 'inherit',
    stderr: 'inherit',
    timeout: 1_200_000,
  });
  if (r.exitCode !== 0) {
    throw new Error(
      `integration tests need the cluster, and 'rmq-bench cluster up' failed (exit ${r.exitCode}). ` +
        'A Docker engine must answer: bash scripts/ensure-engine.sh (Debian, root) or start Docker Desktop.',
    );
  }
}

/**
 * The workshop's audit fails on messages dropped as unroutable, which the nodes count from their
 * start: a count left on this cluster by an earlier session (audit.test.ts drops three on
 * purpose, and runs in a shard with no workshop part for that reason) would fail it. Such a count
 * is reset the only way there is, by restarting the nodes, before the workshop part runs.
 */
async function resetDropCount(): Promise<void> {
  const dropped = await droppedUnroutable();
  if (dropped === 0) return;
  process.stderr.write(`integration: the nodes count ${dropped} messages dropped as unroutable by an earlier run; restarting them for the workshop's audit\n`);
  const { default: Docker } = await import('dockerode');
  const docker = new Docker();
  await Promise.all(CONTAINERS.map((c) => docker.getContainer(c).restart({ t: 30 })));
  await clusterUp();
}

/**
 * Setup and teardown: the tests name their own queues, exchanges and policies it.<something>;
 * delete those left behind (a test that failed half-way, one that keeps its queue for
 * inspection, a session killed before its teardown), so a later `audit` or `watch` of the
 * cluster shows only the demo topology (an exchange left behind fails the workshop's audit:
 * exchange-durable, dlx-route; a policy left behind shows in dlq-demo's check of the policies).
 */
async function removeTestObjects(): Promise<void> {
  try {
    for (const kind of ['queues', 'exchanges', 'policies'] as const) {
      const res = await fetch(`${MGMT}/api/${kind}/%2F?columns=name`, { headers: AUTH, signal: AbortSignal.timeout(10_000) });
      const names = ((await res.json()) as { name: string }[]).map((q) => q.name).filter((n) => n.startsWith('it.'));
      for (const n of names) {
        await fetch(`${MGMT}/api/${kind}/%2F/${encodeURIComponent(n)}`, { method: 'DELETE', headers: AUTH, signal: AbortSignal.timeout(10_000) });
      }
      if (names.length > 0) process.stderr.write(`integration: removed ${names.length} test ${kind} (it.*)\n`);
    }
  } catch (err) {
    process.stderr.write(`integration: could not remove the test queues and exchanges: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}
