import { loadExeca } from '../../util/exec.js';
import { composeEnv, type Config } from '../../config.js';
import { EnvironmentError, PortTakenError, RmqBenchError, errorMessage } from '../../errors.js';
import { ensureEngineScript } from './engine.js';

export type ComposeKind = 'v2' | 'v1';

/** What probing the machine found: the version each tool printed, or null when it is absent. */
export interface ComposeProbe {
  /** `docker compose version --short` */
  plugin: string | null;
  /** `docker-compose version --short` */
  standalone: string | null;
}

export interface ComposeChoice {
  kind: ComposeKind;
  version: string;
}

/** Prefer the compose plugin; fall back to docker-compose v1. A forced kind must exist. */
export function pickCompose(probe: ComposeProbe, forced?: ComposeKind): ComposeChoice | null {
  if (forced === 'v2') return probe.plugin === null ? null : { kind: 'v2', version: probe.plugin };
  if (forced === 'v1') return probe.standalone === null ? null : { kind: 'v1', version: probe.standalone };
  if (probe.plugin !== null) return { kind: 'v2', version: probe.plugin };
  if (probe.standalone !== null) return { kind: 'v1', version: probe.standalone };
  return null;
}

/** The command line for one compose call: [file, args]. Pure, so it is unit-tested. */
export function composeCommand(kind: ComposeKind, project: string, composeFile: string, args: readonly string[]): [string, string[]] {
  const common = ['-p', project, '-f', composeFile, ...args];
  return kind === 'v2' ? ['docker', ['compose', ...common]] : ['docker-compose', common];
}

/** A port error in compose's output → the port number, else null. */
export function portTakenIn(output: string): number | null {
  const m =
    /(?:0\.0\.0\.0|127\.0\.0\.1):(\d+).*(?:address already in use|port is already allocated)/i.exec(output) ??
    /Bind for [\d.]+:(\d+) failed: port is already allocated/i.exec(output) ??
    /listen tcp4? [\d.]+:(\d+): bind: address already in use/i.exec(output);
  return m ? Number(m[1]) : null;
}

export interface ComposeClient {
  readonly kind: ComposeKind;
  readonly version: string;
  /** recreate: make every container again, whatever compose thinks of its configuration. */
  up(env: Record<string, string>, options?: { recreate?: boolean }): Promise<void>;
  down(options: { volumes: boolean }): Promise<void>;
  /** Streams logs to this process's stdout. */
  logs(options: { service?: string; follow: boolean; tail?: number }): Promise<void>;
}

async function versionOf(file: string, args: string[]): Promise<string | null> {
  const execa = await loadExeca();
  try {
    const r = await execa(file, args, { timeout: 15_000, reject: false, stdin: 'ignore' });
    if (r.exitCode !== 0) return null;
    return r.stdout.trim().split('\n')[0]?.replace(/^v/, '') ?? '';
  } catch {
    return null;
  }
}

async function probeCompose(): Promise<ComposeProbe> {
  const [plugin, standalone] = await Promise.all([versionOf('docker', ['compose', 'version', '--short']), versionOf('docker-compose', ['version', '--short'])]);
  return { plugin, standalone };
}

class ExecaComposeClient implements ComposeClient {
  constructor(
    readonly kind: ComposeKind,
    readonly version: string,
    private readonly config: Config,
  ) {}

  private async run(args: string[], env: Record<string, string> = {}, timeoutMs = 600_000): Promise<void> {
    const execa = await loadExeca();
    const [file, argv] = composeCommand(this.kind, this.config.composeProject, this.config.composeFile, args);
    const r = await execa(file, argv, {
      cwd: this.config.projectRoot,
      // Container names and ports of this cluster: docker-compose.yml reads them (every call parses the file).
      env: { ...composeEnv(this.config), ...env, RMQ_BENCH_ERLANG_COOKIE: this.config.erlangCookie },
      timeout: timeoutMs,
      reject: false,
      stdin: 'ignore',
      all: true,
    });
    if (r.exitCode === 0) return;
    const output = String(r.all ?? '');
    const port = portTakenIn(output);
    if (port !== null) {
      const node = this.config.nodes.find((n) => n.amqpPort === port || n.managementPort === port || n.streamPort === port);
      throw new PortTakenError(port, node ? `${node.name}` : 'the cluster');
    }
    const lastLine = output.trim().split('\n').filter(Boolean).pop() ?? `exit code ${r.exitCode}`;
    throw new RmqBenchError(`${file} ${argv.slice(argv.indexOf('-f') + 2).join(' ')} failed: ${lastLine}`, 69);
  }

  up(env: Record<string, string>, options: { recreate?: boolean } = {}): Promise<void> {
    // --no-build: the image is provided before; compose must never try to build or pull on its own.
    return this.run(['up', '-d', '--no-build', ...(options.recreate ? ['--force-recreate'] : [])], env);
  }

  down(options: { volumes: boolean }): Promise<void> {
    // Every node, whatever the count: rabbit4 and rabbit5 are in the profile 'five'.
    return this.run(['down', '--remove-orphans', ...(options.volumes ? ['--volumes'] : [])], { COMPOSE_PROFILES: 'five' });
  }

  async logs(options: { service?: string; follow: boolean; tail?: number }): Promise<void> {
    const execa = await loadExeca();
    const args = ['logs', '--no-color', ...(options.follow ? ['--follow'] : []), ...(options.tail ? ['--tail', String(options.tail)] : [])];
    if (options.service) args.push(options.service);
    const [file, argv] = composeCommand(this.kind, this.config.composeProject, this.config.composeFile, args);
    await execa(file, argv, { cwd: this.config.projectRoot, env: composeEnv(this.config), stdout: 'inherit', stderr: 'inherit', stdin: 'ignore' });
  }
}

/** Every call says that compose is missing, instead of an ENOENT deep inside. */
class MissingComposeClient implements ComposeClient {
  readonly kind = 'v2' as const;
  readonly version = 'none';
  private fail(): never {
    throw new EnvironmentError("no compose tool: neither 'docker compose' nor 'docker-compose' runs", {
      hint: `install the Docker Compose plugin, or docker-compose; on Debian as root: bash ${ensureEngineScript()}`,
    });
  }
  up(): Promise<void> {
    return this.fail();
  }
  down(): Promise<void> {
    return this.fail();
  }
  logs(): Promise<void> {
    return this.fail();
  }
}

export async function createComposeClient(config: Config): Promise<ComposeClient> {
  let probe: ComposeProbe;
  try {
    probe = await probeCompose();
  } catch (err) {
    throw new EnvironmentError(`could not probe for compose: ${errorMessage(err)}`);
  }
  const choice = pickCompose(probe, config.composeTool);
  if (choice === null) {
    if (config.composeTool !== undefined) {
      throw new EnvironmentError(
        `RMQ_BENCH_COMPOSE asks for ${config.composeTool === 'v2' ? "'docker compose'" : "'docker-compose'"}, which does not run here`,
      );
    }
    return new MissingComposeClient();
  }
  return new ExecaComposeClient(choice.kind, choice.version, config);
}
