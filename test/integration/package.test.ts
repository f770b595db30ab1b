import { execa } from 'execa';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { AMQP_PORTS, CONTAINERS, MGMT_PORTS, ROOT } from './cli.js';

/**
 * The package as a user gets it: `npm pack` of this checkout, `npm install -g` of the tarball into
 * a temporary prefix, and the installed `rmq-bench` run from another directory against this
 * session's cluster (RMQ_BENCH_NAME and the port variables, as cli.ts reads them).
 *
 * The install runs with --ignore-scripts. better-sqlite3 (and ssh2's optional crypto and
 * cpu-features, under dockerode) are native: with no prebuilt binary reachable (GitHub is not, from
 * this project's machine) their install scripts compile them, 5 to 11 minutes here on 2 cores, for
 * the dependency's own build, which `npm ci` in the checkout already does. What this package
 * controls (the files it ships, the bin link, its dependencies resolving, nothing that needs the
 * checkout or typescript) is what is tested, in under half a minute. --prefer-offline: the npm
 * cache that `npm ci` filled answers, the registry only for what it lacks.
 */

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string> };
const cluster = loadConfig(process.env);

/** npm's own variables (npm_config_prefix and the like, set when the tests run under `npm test`) stay out: the flags decide. */
function npmEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !/^npm_/i.test(e[0])));
}

/** The installed binary, run from os.tmpdir(): never from the checkout, never with its project root. */
async function installed(bin: string, args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const env = npmEnv();
  delete env.RMQ_BENCH_PROJECT_ROOT;
  const r = await execa(bin, args, {
    cwd: os.tmpdir(),
    env: { ...env, RMQ_BENCH_QUIET: '1' },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: 60_000,
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

interface Status {
  cluster: string;
  prometheusPort: number;
  reachable: boolean;
  nodes: { name: string; amqpPort: number; managementPort: number; container: string; running: boolean; version: string }[];
  queues: { name: string; members: string[] }[];
}

describe('the package: npm pack, npm install -g into a temporary prefix, run from another directory', { timeout: 180_000 }, () => {
  let dir = '';
  let packed: string[] = [];
  let packageDir = '';
  let bin = '';
  const timings: string[] = [];

  beforeAll(async () => {
    if (!existsSync(path.join(ROOT, 'dist', 'cli', 'main.js')))
      throw new Error('dist/ is missing: run npx tsc -p tsconfig.json first (npm run test:integration does)');
    dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-package-'));
    const env = npmEnv();
    // --ignore-scripts: the checkout's dist/ as built (prepack would remove it under the other tests' feet).
    let started = performance.now();
    const pack = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, env, extendEnv: false, stdin: 'ignore' });
    const [doc] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
    packed = doc!.files.map((f) => f.path);
    timings.push(`pack ${Math.round(performance.now() - started)} ms`);

    started = performance.now();
    const prefix = path.join(dir, 'prefix');
    await execa(
      'npm',
      ['install', '-g', path.join(dir, doc!.filename), '--prefix', prefix, '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'],
      { cwd: dir, env, extendEnv: false, stdin: 'ignore', timeout: 150_000 },
    );
    timings.push(`install ${Math.round(performance.now() - started)} ms`);
    packageDir = path.join(prefix, 'lib', 'node_modules', pkg.name);
    bin = path.join(prefix, 'bin', 'rmq-bench');
  }, 180_000);

  afterAll(async () => {
    process.stderr.write(`package.test: ${timings.join(', ')}\n`);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the tarball carries what the CLI reads at run time, and nothing that needs the checkout', () => {
    for (const f of [
      'package.json',
      'LICENSE',
      'README.md',
      'bin/rmq-bench.js',
      'dist/cli/main.js',
      'dist/config.js',
      'docker-compose.yml',
      'cluster/definitions.json',
      'cluster/rabbitmq.conf',
      'cluster/enabled_plugins',
      'cluster/entrypoint.sh',
      'scripts/ensure-engine.sh',
    ])
      expect(packed, f).toContain(f);
    // Source maps point at src/, which is not shipped; the demo and test scripts run `npm ci`.
    expect(packed.filter((f) => f.endsWith('.map') || f.endsWith('.tsbuildinfo') || /^(src|test|bench|docs)\//.test(f))).toEqual([]);
    expect(packed.filter((f) => f.startsWith('scripts/'))).toEqual(['scripts/ensure-engine.sh']);
    // Every host path docker-compose.yml mounts into the nodes is in the package.
    const compose = readFileSync(path.join(packageDir, 'docker-compose.yml'), 'utf8');
    const mounts = [...compose.matchAll(/^\s+- \.\/([^:]+):/gm)].map((m) => m[1]!);
    expect(mounts.length).toBeGreaterThan(0);
    for (const m of mounts) expect(existsSync(path.join(packageDir, m)), m).toBe(true);
    expect(readFileSync(path.join(packageDir, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2026 rmq-bench contributors\n/);
    // Installing needed no typescript (prepare runs for git and folder installs, not for a tarball).
    expect(existsSync(path.join(packageDir, 'node_modules', 'typescript'))).toBe(false);
    expect(existsSync(path.join(packageDir, 'node_modules', 'better-sqlite3', 'package.json'))).toBe(true);
  });

  it("rmq-bench --version, from another directory: package.json's version", async () => {
    const r = await installed(bin, ['--version']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it("rmq-bench cluster status, from another directory: this session's cluster by name and ports, 3 running nodes", async () => {
    const r = await installed(bin, ['cluster', 'status', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as Status;
    expect(s.cluster).toBe(cluster.clusterName);
    expect(s.prometheusPort).toBe(cluster.prometheusPort);
    expect(s.reachable).toBe(true);
    expect(s.nodes.map((n) => [n.name, n.amqpPort, n.managementPort])).toEqual(CONTAINERS.map((c, i) => [c, AMQP_PORTS[i], MGMT_PORTS[i]]));
    for (const n of s.nodes) {
      expect(n.container).toBe('running');
      expect(n.running).toBe(true);
      expect(n.version).toMatch(/^4\.3\.\d+/);
    }
    expect(s.queues.find((q) => q.name === 'demo.orders')?.members).toHaveLength(3);
    // The people's copy, on stderr: which cluster, where.
    const [a, m] = [AMQP_PORTS, MGMT_PORTS].map((p) => `${p[0]}-${p[2]}`);
    expect(r.stderr.split('\n')[0]).toBe(`cluster ${cluster.clusterName} on 127.0.0.1: AMQP ${a}, management ${m}, Prometheus ${cluster.prometheusPort}`);
  });
});
