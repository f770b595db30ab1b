import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadExeca } from '../../util/exec.js';
import { LINE_SPECS, lineOf } from '../../broker-versions.js';
import type { Config } from '../../config.js';
import { EnvironmentError, errorMessage } from '../../errors.js';
import type { Progress } from '../../progress.js';
import { withDeadline } from '../../util/retry.js';
import { type Docker, imageExists, imageId, imageLabels } from './engine.js';
import { hostDebianMirror } from '../broker/mirror.js';

export interface ImageResult {
  image: string;
  how: 'present' | 'pulled' | 'built';
  elapsedMs: number;
  /** What a failed pull said, when auto mode fell back to building. */
  pullError?: string;
}

/**
 * The entrypoint baked into the built image, after the official image's conventions: run
 * rabbitmq-server as the rabbitmq user (setpriv, from util-linux), logs on stdout.
 */
const ENTRYPOINT = `#!/bin/sh
# rmq-bench image entrypoint (official rabbitmq image conventions).
set -e
if [ "\${1:-}" = rabbitmq-server ] && [ "$(id -u)" = 0 ]; then
  shift
  mkdir -p /var/lib/rabbitmq /var/log/rabbitmq
  chown -R rabbitmq:rabbitmq /var/lib/rabbitmq /var/log/rabbitmq
  exec setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups /usr/lib/rabbitmq/bin/rabbitmq-server "$@"
fi
exec "$@"
`;

/**
 * What the built image is, in its labels: `rmq-bench.build` (this number) and `rmq-bench.plugins`
 * (the RabbitMQ plugin apps kept). Build 1 has every plugin Debian ships; build 2 keeps the ones
 * the cluster enables (cluster/enabled_plugins), rabbit, and what they depend on, so that a node
 * boots with less CPU (its code path and its configuration schemas are the apps present, not the
 * ones enabled). An image of an older build, or one that lacks a plugin enabled_plugins names,
 * is rebuilt when rmq-bench is allowed to build (and used as it is when the rebuild fails).
 */
export const BUILT_IMAGE_REVISION = 2;
const LABEL_BUILD = 'rmq-bench.build';
const LABEL_PLUGINS = 'rmq-bench.plugins';
/** The apps every node starts, whatever the plugins: the broker and its boot. */
const CORE_APPS = ['rabbit', 'rabbitmq_prelaunch'];

/** The plugins an enabled_plugins file names (`[rabbitmq_management,rabbitmq_prometheus].`, `%` comments). Pure. */
export function parseEnabledPlugins(text: string): string[] {
  return atoms(/\[([^\]]*)\]/.exec(text.replace(/%.*$/gm, ''))?.[1] ?? '');
}

/** The atoms of an Erlang list's inside (`a, 'b', c`). Pure. */
function atoms(list: string): string[] {
  return list
    .split(',')
    .map((a) => a.trim().replace(/^'(.*)'$/, '$1'))
    .filter((a) => a !== '');
}

/** The applications an Erlang `.app` file depends on: `applications`, `included_applications`, `optional_applications`. Pure. */
export function appDependencies(appText: string): string[] {
  const deps: string[] = [];
  for (const key of ['applications', 'included_applications', 'optional_applications']) {
    // Generated files, no comments (a `%` in them is inside a string): the list as it stands.
    const list = new RegExp(`\\{\\s*${key}\\s*,\\s*\\[([^\\]]*)\\]`).exec(appText)?.[1];
    if (list) deps.push(...atoms(list));
  }
  return deps;
}

/**
 * The plugin apps a node needs that enables `roots`: the roots and, transitively, what they
 * depend on, among `apps` (the image's plugins folder, each app's dependencies). Dependencies that
 * are not there (Erlang/OTP's own, such as kernel or ssl) are not followed; roots that are not
 * there are `missing`. Pure.
 */
export function pluginClosure(apps: ReadonlyMap<string, readonly string[]>, roots: readonly string[]): { keep: string[]; missing: string[] } {
  const keep = new Set<string>();
  const todo = [...roots];
  for (let app = todo.pop(); app !== undefined; app = todo.pop()) {
    const deps = apps.get(app);
    if (!deps || keep.has(app)) continue;
    keep.add(app);
    todo.push(...deps);
  }
  return { keep: [...keep].sort(), missing: roots.filter((r) => !apps.has(r)) };
}

/** Why a built image should be rebuilt (an older build, or a plugin enabled but not in it), or undefined. Pure. */
export function builtImageStale(labels: Readonly<Record<string, string>>, enabled: readonly string[]): string | undefined {
  const build = Number(labels[LABEL_BUILD] ?? 1);
  if (!(build >= BUILT_IMAGE_REVISION)) return `it was built by an older rmq-bench (build ${labels[LABEL_BUILD] ?? 1}, with every plugin)`;
  const kept = new Set((labels[LABEL_PLUGINS] ?? '').split(','));
  const absent = enabled.filter((p) => !kept.has(p));
  if (absent.length > 0) return `it lacks ${absent.join(', ')} (cluster/enabled_plugins)`;
  return undefined;
}

/** What a tag names now: its id, and for the image rmq-bench builds, why it should be built again (builtImageStale). */
export async function imageNow(docker: Docker, config: Config, tag: string): Promise<{ id: string | undefined; stale: string | undefined }> {
  const id = await imageId(docker, tag);
  if (id === undefined || tag !== config.builtImage) return { id, stale: undefined };
  return { id, stale: builtImageStale((await imageLabels(docker, tag)) ?? {}, await enabledPlugins(config)) };
}

async function enabledPlugins(config: Config): Promise<string[]> {
  const file = path.join(path.dirname(config.composeFile), 'cluster', 'enabled_plugins');
  try {
    return parseEnabledPlugins(await readFile(file, 'utf8'));
  } catch (err) {
    throw new EnvironmentError(`cannot read ${file}: ${errorMessage(err)}`);
  }
}

/** Remove from the root file system's RabbitMQ plugins folder every app a node with `enabled` does not need; the apps kept. */
async function prunePlugins(rootfs: string, enabled: readonly string[]): Promise<string[]> {
  const lib = path.join(rootfs, 'usr/lib/rabbitmq/lib');
  const server = (await readdir(lib)).find((d) => d.startsWith('rabbitmq_server-'));
  if (!server) throw new EnvironmentError(`no rabbitmq_server-* folder in ${lib}`);
  const dir = path.join(lib, server, 'plugins');
  const folders = new Map<string, string>();
  const apps = new Map<string, string[]>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const name = /^(.+)-\d[^-]*$/.exec(entry.name)?.[1];
    if (!entry.isDirectory() || !name) continue;
    folders.set(name, entry.name);
    apps.set(name, appDependencies(await readFile(path.join(dir, entry.name, 'ebin', `${name}.app`), 'utf8')));
  }
  const { keep, missing } = pluginClosure(apps, [...CORE_APPS, ...enabled]);
  if (missing.length > 0) throw new EnvironmentError(`the rabbitmq-server package has no ${missing.join(', ')} (named in cluster/enabled_plugins)`);
  const kept = new Set(keep);
  for (const [name, folder] of folders) if (!kept.has(name)) await rm(path.join(dir, folder), { recursive: true, force: true });
  return keep;
}

/** The version of a package in a dpkg status file. Pure. */
export function packageVersion(dpkgStatus: string, pkg: string): string | undefined {
  for (const stanza of dpkgStatus.split(/\n\n+/)) {
    if (new RegExp(`^Package: ${pkg.replace(/[.+]/g, '\\$&')}$`, 'm').test(stanza)) {
      return /^Version: (?:\d+:)?([^\s-]+)/m.exec(stanza)?.[1];
    }
  }
  return undefined;
}

async function pull(docker: Docker, image: string, progress: Progress, timeoutMs: number): Promise<void> {
  progress.update(`pulling ${image}`);
  await withDeadline(
    () =>
      new Promise<void>((resolve, reject) => {
        docker.pull(image, (err: unknown, stream: NodeJS.ReadableStream | undefined) => {
          if (err || !stream) {
            reject(err ?? new Error('no stream'));
            return;
          }
          docker.modem.followProgress(
            stream,
            (doneErr: unknown) => (doneErr ? reject(doneErr) : resolve()),
            (event: { status?: string; progress?: string }) => progress.update(`pulling ${image}: ${event.status ?? ''} ${event.progress ?? ''}`),
          );
        });
      }),
    timeoutMs,
    `pulling ${image} did not finish`,
  );
}

function canBuildHere(): string | null {
  if (process.platform !== 'linux') return `building needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'building needs root (debootstrap)';
  return null;
}

async function commandExists(cmd: string): Promise<boolean> {
  const execa = await loadExeca();
  const r = await execa('sh', ['-c', `command -v ${cmd}`], { reject: false, stdin: 'ignore' });
  return r.exitCode === 0;
}

/**
 * Build the RabbitMQ image from Debian packages: debootstrap of the Debian suite that ships the
 * cluster's RabbitMQ line (sid for 4.3, trixie for 4.0, bookworm for 3.10) with rabbitmq-server
 * and procps, then `docker import` with the official image's conventions. A suite whose
 * rabbitmq-server is of another line is refused.
 */
export async function buildImage(config: Config, progress: Progress, tag = config.builtImage): Promise<{ version: string; elapsedMs: number }> {
  const execa = await loadExeca();
  const why = canBuildHere();
  if (why) {
    throw new EnvironmentError(`cannot build ${tag} here: ${why}`, {
      hint: 'use Docker Desktop with registry access (the official image is pulled), or set RMQ_BENCH_IMAGE to an image you have',
    });
  }
  const started = performance.now();
  const mirror = config.debianMirror ?? (await hostDebianMirror());
  if (!mirror) {
    throw new EnvironmentError('no Debian mirror found in /etc/apt/sources.list*', { hint: 'set RMQ_BENCH_DEBIAN_MIRROR to a Debian archive URL' });
  }
  if (!(await commandExists('debootstrap'))) {
    if (!(await commandExists('apt-get'))) throw new EnvironmentError('debootstrap is not installed and apt-get is not available');
    progress.update('installing debootstrap (apt-get)');
    const env = { DEBIAN_FRONTEND: 'noninteractive' };
    // Another apt-get at the same time (scripts/test.sh installs Chromium beside the build) holds
    // dpkg's lock: wait for it rather than fail.
    const lock = ['-o', 'DPkg::Lock::Timeout=240'];
    let r = await execa('apt-get', [...lock, 'install', '-y', '-qq', 'debootstrap'], { env, reject: false, stdin: 'ignore', all: true, timeout: 300_000 });
    if (r.exitCode !== 0) {
      await execa('apt-get', [...lock, 'update', '-qq'], { env, reject: false, stdin: 'ignore', timeout: 300_000 });
      r = await execa('apt-get', [...lock, 'install', '-y', '-qq', 'debootstrap'], { env, reject: false, stdin: 'ignore', all: true, timeout: 300_000 });
    }
    if (r.exitCode !== 0) throw new EnvironmentError(`apt-get install debootstrap failed: ${String(r.all).trim().split('\n').pop()}`);
  }

  const rootfs = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-rootfs-'));
  try {
    const label = `debootstrap ${config.debianSuite} with rabbitmq-server (about a minute)`;
    progress.update(label);
    const boot = execa('debootstrap', ['--variant=minbase', '--include=rabbitmq-server,procps', config.debianSuite, rootfs, mirror], {
      reject: false,
      stdin: 'ignore',
      all: true,
      timeout: 1_200_000,
      buffer: { all: true },
    });
    boot.all?.on('data', (chunk: Buffer) => {
      const last = chunk.toString().trim().split('\n').pop();
      if (last) progress.update(`${label}: ${last.replace(/^I: /, '').slice(0, 70)}`);
    });
    const r = await boot;
    if (r.exitCode !== 0) {
      const tail = String(r.all ?? '')
        .trim()
        .split('\n')
        .slice(-3)
        .join(' | ');
      throw new EnvironmentError(`debootstrap ${config.debianSuite} failed (exit ${r.exitCode}): ${tail}`);
    }
    const status = await readFile(path.join(rootfs, 'var/lib/dpkg/status'), 'utf8');
    const version = packageVersion(status, 'rabbitmq-server');
    if (!version) throw new EnvironmentError('debootstrap finished but rabbitmq-server is not installed in the image');
    if (lineOf(version) !== config.rabbitmq) {
      throw new EnvironmentError(`Debian ${config.debianSuite} ships rabbitmq-server ${version}, not RabbitMQ ${config.rabbitmq}`, {
        hint: `unset RMQ_BENCH_DEBIAN_SUITE (RabbitMQ ${config.rabbitmq} is built from Debian ${LINE_SPECS[config.rabbitmq].debianSuite}), or set RMQ_BENCH_IMAGE to an image you have`,
      });
    }

    progress.update(`preparing the image (rabbitmq-server ${version}): the plugins the cluster enables`);
    const plugins = await prunePlugins(rootfs, await enabledPlugins(config));
    const entry = path.join(rootfs, 'usr/local/bin/docker-entrypoint.sh');
    await writeFile(entry, ENTRYPOINT);
    await chmod(entry, 0o755);
    await rm(path.join(rootfs, 'var/lib/rabbitmq/.erlang.cookie'), { force: true });
    for (const dir of ['usr/share/doc', 'usr/share/man', 'usr/share/locale', 'var/cache/apt/archives', 'var/lib/apt/lists']) {
      await execa('sh', ['-c', `rm -rf "${path.join(rootfs, dir)}"/*`], { reject: false, stdin: 'ignore' });
    }

    progress.update(`docker import ${tag}`);
    const changes = [
      'ENV HOME=/var/lib/rabbitmq',
      'ENV LANG=C.UTF-8',
      'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      'ENTRYPOINT ["docker-entrypoint.sh"]',
      'CMD ["rabbitmq-server"]',
      'EXPOSE 4369 5672 15672 15692 25672',
      'VOLUME /var/lib/rabbitmq',
      `LABEL org.opencontainers.image.version=${version} org.opencontainers.image.title=rmq-bench-rabbitmq rmq-bench.source=debian-${config.debianSuite} ${LABEL_BUILD}=${BUILT_IMAGE_REVISION} ${LABEL_PLUGINS}=${plugins.join(',')}`,
    ].flatMap((c) => ['-c', c]);
    await execa('tar', ['-C', rootfs, '-c', '.'], { stdin: 'ignore', buffer: false }).pipe('docker', ['import', ...changes, '-', tag], {
      timeout: 600_000,
    });
    return { version, elapsedMs: performance.now() - started };
  } finally {
    await rm(rootfs, { recursive: true, force: true });
  }
}

/**
 * Make sure the image compose will run exists locally. RMQ_BENCH_IMAGE is used as is. Otherwise,
 * by RMQ_BENCH_IMAGE_SOURCE: auto (default) uses the official image or the built one when
 * present (the built one rebuilt first when stale: builtImageStale), else tries a pull and builds
 * from Debian packages when the pull fails; pull only
 * pulls; build only builds.
 */
export async function ensureImage(docker: Docker, config: Config, progress: Progress): Promise<ImageResult> {
  const started = performance.now();
  const elapsed = (): number => performance.now() - started;
  const pullTimeoutMs = 300_000;

  if (config.imageOverride) {
    const image = config.imageOverride;
    if (image === config.builtImage) {
      const existing = await existingBuilt(docker, config, progress, image, elapsed);
      if (existing) return existing;
      await buildImage(config, progress, image);
      return { image, how: 'built', elapsedMs: elapsed() };
    }
    if (await imageExists(docker, image)) return { image, how: 'present', elapsedMs: elapsed() };
    try {
      await pull(docker, image, progress, pullTimeoutMs);
      return { image, how: 'pulled', elapsedMs: elapsed() };
    } catch (err) {
      throw new EnvironmentError(`RMQ_BENCH_IMAGE=${image} is not on this machine and pulling it failed: ${errorMessage(err)}`, {
        hint: `unset RMQ_BENCH_IMAGE to let rmq-bench build ${config.builtImage} from Debian packages`,
      });
    }
  }

  const official = config.defaultImage;
  const built = config.builtImage;
  if (config.imageSource !== 'build' && (await imageExists(docker, official))) return { image: official, how: 'present', elapsedMs: elapsed() };
  if (config.imageSource !== 'pull') {
    const existing = await existingBuilt(docker, config, progress, built, elapsed);
    if (existing) return existing;
  }

  let pullError: string | undefined;
  if (config.imageSource !== 'build') {
    try {
      await pull(docker, official, progress, pullTimeoutMs);
      return { image: official, how: 'pulled', elapsedMs: elapsed() };
    } catch (err) {
      pullError = errorMessage(err);
      if (config.imageSource === 'pull') {
        throw new EnvironmentError(`pulling ${official} failed: ${pullError}`, {
          hint: 'set RMQ_BENCH_IMAGE_SOURCE=build (or auto) to build it from Debian packages',
        });
      }
      progress.info(`pulling ${official} failed (${pullError}); building ${built} from Debian packages instead`);
    }
  }
  await buildImage(config, progress, built);
  return { image: built, how: 'built', elapsedMs: elapsed(), ...(pullError === undefined ? {} : { pullError }) };
}

/**
 * The built image when it is on this machine: as it is, or rebuilt first when it is stale
 * (builtImageStale) and this machine can build; a failed rebuild leaves the old one in use, with a
 * line saying so. Undefined when there is none.
 */
async function existingBuilt(docker: Docker, config: Config, progress: Progress, tag: string, elapsed: () => number): Promise<ImageResult | undefined> {
  const labels = await imageLabels(docker, tag);
  if (!labels) return undefined;
  const stale = builtImageStale(labels, await enabledPlugins(config));
  if (stale && canBuildHere() === null) {
    progress.info(`rebuilding ${tag}: ${stale}`);
    try {
      await buildImage(config, progress, tag);
      return { image: tag, how: 'built', elapsedMs: elapsed() };
    } catch (err) {
      progress.info(`rebuilding ${tag} failed (${errorMessage(err)}); using the one on this machine`);
    }
  }
  return { image: tag, how: 'present', elapsedMs: elapsed() };
}
