import { execa } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config.js';
import { runWorkshopPart } from './workshop-run.js';

/**
 * One cluster for all integration tests: `rmq-bench cluster up` (the real binary), which
 * builds the image when it is missing. No engine means a loud failure, never a skip.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const started = performance.now();
  const r = await execa('node', [path.join(root, 'bin', 'rmq-bench.js'), 'cluster', 'up'], {
    cwd: root,
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
  process.stderr.write(`integration: cluster ready in ${Math.round(performance.now() - started)} ms\n`);
  // What an earlier session left behind when it was killed before its teardown.
  await removeTestObjects();
  // Outcomes shared between test files of this session (the workshop's run): see workshop-run.ts.
  const sessionDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-it-session-'));
  project.provide('sessionDir', sessionDir);
  // A shard's part of the workshop runs first, on the cluster as the setup left it, before any
  // test file can leave something on it (scripts/test-integration.sh names the part).
  const part = process.env.RMQ_BENCH_WORKSHOP_PART;
  if (part !== undefined && part !== '') await runWorkshopPart(Number(part), sessionDir);
  return async () => {
    rmSync(sessionDir, { recursive: true, force: true });
    if (process.env.RMQ_BENCH_KEEP_TEST_QUEUES !== '1') await removeTestObjects();
  };
}

/**
 * Setup and teardown: the tests name their own queues, exchanges and policies it.<something>;
 * delete those left behind (a test that failed half-way, one that keeps its queue for
 * inspection, a session killed before its teardown), so a later `audit` or `watch` of the
 * cluster shows only the demo topology (an exchange left behind fails the workshop's audit:
 * exchange-durable, dlx-route; a policy left behind shows in dlq-demo's check of the policies).
 */
async function removeTestObjects(): Promise<void> {
  const auth = { authorization: `Basic ${Buffer.from('demo:demo').toString('base64')}` };
  // This session's cluster (RMQ_BENCH_NAME and the ports): the default one, or a shard's second one.
  const mgmt = `http://127.0.0.1:${loadConfig(process.env).nodes[0]!.managementPort}`;
  try {
    for (const kind of ['queues', 'exchanges', 'policies'] as const) {
      const res = await fetch(`${mgmt}/api/${kind}/%2F?columns=name`, { headers: auth, signal: AbortSignal.timeout(10_000) });
      const names = ((await res.json()) as { name: string }[]).map((q) => q.name).filter((n) => n.startsWith('it.'));
      for (const n of names) {
        await fetch(`${mgmt}/api/${kind}/%2F/${encodeURIComponent(n)}`, { method: 'DELETE', headers: auth, signal: AbortSignal.timeout(10_000) });
      }
      if (names.length > 0) process.stderr.write(`integration: removed ${names.length} test ${kind} (it.*)\n`);
    }
  } catch (err) {
    process.stderr.write(`integration: could not remove the test queues and exchanges: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}
