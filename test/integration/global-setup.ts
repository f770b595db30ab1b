import { execa } from 'execa';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * One cluster for all integration tests: `rmq-bench cluster up` (the real binary), which
 * builds the image when it is missing. No engine means a loud failure, never a skip.
 */
export default async function setup(): Promise<void> {
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
}
