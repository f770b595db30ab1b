import type Docker from 'dockerode';
import path from 'node:path';
import { PROJECT_ROOT } from '../../config.js';
import { EnvironmentError, errorMessage } from '../../errors.js';
import { withDeadline } from '../../util/retry.js';
import { deferDockerodeExtras } from './defer-require.js';

export type { Docker };

/**
 * The shipped scripts/ensure-engine.sh as a user can run it from where they are: relative inside
 * the checkout (or the package), absolute elsewhere (an installed package lives in the global prefix).
 */
export function ensureEngineScript(cwd: string = process.cwd(), root: string = PROJECT_ROOT): string {
  const script = path.join(root, 'scripts', 'ensure-engine.sh');
  const relative = path.relative(cwd, script);
  return relative.startsWith('..') || path.isAbsolute(relative) ? script : relative;
}

/** What to tell a user whose engine does not answer, by platform. */
export function engineHint(platform: NodeJS.Platform = process.platform, isRoot = process.getuid?.() === 0, script = ensureEngineScript()): string {
  if (platform === 'darwin' || platform === 'win32') return 'start Docker Desktop and try again';
  return isRoot
    ? `start the engine: bash ${script} (on Debian it installs docker.io and starts dockerd)`
    : `start the engine (sudo systemctl start docker), or on Debian: sudo bash ${script}`;
}

/** A dockerode client that has answered a ping. */
export async function connectEngine(timeoutMs = 5_000): Promise<Docker> {
  // Loaded on first use: dockerode costs about 28 MB of RSS, and most commands never need it;
  // without the BuildKit and ssh modules it never uses (defer-require.ts).
  deferDockerodeExtras();
  const { default: DockerClient } = await import('dockerode');
  const docker = new DockerClient();
  try {
    await withDeadline(() => docker.ping(), timeoutMs, 'the Docker engine did not answer a ping');
  } catch (err) {
    const where = process.env.DOCKER_HOST ?? '/var/run/docker.sock';
    throw new EnvironmentError(`no Docker engine answers at ${where}: ${errorMessage(err)}`, { hint: engineHint(), cause: err });
  }
  return docker;
}

export async function imageExists(docker: Docker, name: string): Promise<boolean> {
  return (await imageLabels(docker, name)) !== undefined;
}

/** The id an image name points at now (sha256:...), or undefined when it is not on this machine. */
export async function imageId(docker: Docker, name: string): Promise<string | undefined> {
  try {
    return ((await docker.getImage(name).inspect()) as { Id?: string }).Id;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    throw err;
  }
}

/** An image's labels, or undefined when the image is not on this machine. */
export async function imageLabels(docker: Docker, name: string): Promise<Record<string, string> | undefined> {
  try {
    const info = (await docker.getImage(name).inspect()) as { Config?: { Labels?: Record<string, string> | null } };
    return info.Config?.Labels ?? {};
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    throw err;
  }
}

type ContainerState = 'running' | 'paused' | 'stopped' | 'restarting' | 'missing';

export interface ContainerInfo {
  name: string;
  state: ContainerState;
  /** Docker healthcheck status, when the container has one. */
  health: 'healthy' | 'unhealthy' | 'starting' | 'none';
  image: string | undefined;
  /** The id of the image it was made from (sha256:...): a tag rebuilt since points elsewhere. */
  imageId: string | undefined;
  startedAt: string | undefined;
  /** The container's environment (NAME=value), as it was created; empty for a missing one. */
  env: readonly string[];
  /** The host port each container port is published on ('5672/tcp' → 31672), as it was created. */
  hostPorts: Readonly<Record<string, number>>;
  /** Its bind mounts: the host path each container path comes from, as it was created. */
  binds: readonly { source: string; destination: string }[];
}

export async function inspectContainer(docker: Docker, name: string): Promise<ContainerInfo> {
  try {
    const info = await docker.getContainer(name).inspect();
    const s = info.State;
    const state: ContainerState = s.Paused ? 'paused' : s.Restarting ? 'restarting' : s.Running ? 'running' : 'stopped';
    const health = (s.Health?.Status as ContainerInfo['health'] | undefined) ?? 'none';
    const hostPorts: Record<string, number> = {};
    for (const [port, bindings] of Object.entries(info.HostConfig?.PortBindings ?? {})) {
      const host = Number((bindings as { HostPort?: string }[] | null)?.[0]?.HostPort);
      if (Number.isInteger(host) && host > 0) hostPorts[port] = host;
    }
    const binds = (info.Mounts ?? []).filter((m) => m.Type === 'bind').map((m) => ({ source: m.Source, destination: m.Destination }));
    return { name, state, health, image: info.Config.Image, imageId: info.Image, startedAt: s.StartedAt, env: info.Config.Env ?? [], hostPorts, binds };
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) {
      return { name, state: 'missing', health: 'none', image: undefined, imageId: undefined, startedAt: undefined, env: [], hostPorts: {}, binds: [] };
    }
    throw err;
  }
}

/** Run a command in a container (docker exec) with a deadline; returns its exit code and output. */
export async function execIn(docker: Docker, container: string, cmd: string[], timeoutMs = 60_000): Promise<{ exitCode: number; output: string }> {
  const { PassThrough } = await import('node:stream');
  return withDeadline(
    async () => {
      const exec = await docker.getContainer(container).exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
      const stream = await exec.start({ hijack: true, stdin: false });
      const sink = new PassThrough();
      const chunks: Buffer[] = [];
      sink.on('data', (c: Buffer) => chunks.push(c));
      docker.modem.demuxStream(stream, sink, sink);
      await new Promise<void>((resolve, reject) => {
        stream.on('end', resolve);
        stream.on('close', resolve);
        stream.on('error', reject);
      });
      const info = await exec.inspect();
      return { exitCode: info.ExitCode ?? -1, output: Buffer.concat(chunks).toString('utf8') };
    },
    timeoutMs,
    `docker exec ${container} ${cmd.join(' ')} did not finish`,
  );
}
