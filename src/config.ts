import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { DEFAULT_RABBITMQ_LINE, LINE_SPECS, lineProblem, type RabbitmqLine } from './broker-versions.js';
import { UsageError } from './errors.js';
import { parseDurationMs } from './util/duration.js';

/** One node of the bench cluster: the compose service, its container and its loopback ports. */
export interface NodeSpec {
  /** Compose service and host name: rabbit1..rabbit3, or ..rabbit5 (the same in every cluster: each has its own network). */
  readonly name: string;
  /** Docker container: rabbit1 for the default cluster, <name>-rabbit1 for a cluster named otherwise. */
  readonly container: string;
  /** Erlang node name: rabbit@rabbit1. */
  readonly nodeName: string;
  readonly amqpPort: number;
  readonly managementPort: number;
  /** The native stream protocol's port on loopback, also what the node advertises to stream clients. */
  readonly streamPort: number;
}

export type ImageSource = 'auto' | 'pull' | 'build';

export interface Config {
  /** Root of the checkout: where docker-compose.yml and cluster/ live. */
  readonly projectRoot: string;
  readonly composeFile: string;
  readonly composeProject: string;
  /** 'docker compose' or 'docker-compose' to force one; undefined to detect. */
  readonly composeTool: 'v2' | 'v1' | undefined;
  readonly definitionsFile: string;
  /** The image compose is asked to run when the user did not choose one. */
  readonly defaultImage: string;
  /** RMQ_BENCH_IMAGE when set: used as is, never replaced by the built image. */
  readonly imageOverride: string | undefined;
  readonly imageSource: ImageSource;
  /** The tag of the image built from Debian packages. */
  readonly builtImage: string;
  readonly debianMirror: string | undefined;
  readonly debianSuite: string;
  /**
   * The RabbitMQ version the cluster runs (its line: 3.10, 4.0, 4.3): RMQ_BENCH_RABBITMQ, else what
   * `cluster up --rabbitmq` recorded for this cluster, else 4.3. It chooses the image; what a
   * command may ask of the broker is decided by the version the broker reports.
   */
  readonly rabbitmq: RabbitmqLine;
  /**
   * cluster_partition_handling on the nodes (RabbitMQ before 4.3): RMQ_BENCH_PARTITION_HANDLING,
   * else what `cluster up --partition-handling` recorded, else undefined (the broker's default, ignore).
   */
  readonly partitionHandling: PartitionHandling | undefined;
  /**
   * Which feature flags a node enables on its first boot: RMQ_BENCH_FEATURE_FLAGS, else what
   * `cluster up --feature-flags` recorded, else 'stable' (the broker's default).
   */
  readonly featureFlags: FeatureFlagSet;
  readonly host: string;
  readonly user: string;
  readonly password: string;
  readonly vhost: string;
  readonly erlangCookie: string;
  /** RMQ_BENCH_NAME: 'rmq-bench' for the default cluster; another name runs a second cluster beside it. */
  readonly clusterName: string;
  /** rabbit1..N: 3 or 5 (RMQ_BENCH_NODES, else what `cluster up --nodes` recorded for this cluster, else 3). */
  readonly nodes: readonly NodeSpec[];
  /**
   * Where `cluster up` records this machine's clusters (their node counts): RMQ_BENCH_STATE_DIR,
   * else $XDG_STATE_HOME/rmq-bench, else $HOME/.local/state/rmq-bench; undefined (nothing recorded
   * or read) for an environment with none of them.
   */
  readonly stateDir: string | undefined;
  readonly prometheusPort: number;
  /** RMQ_BENCH_WAIT_FOR_BROKER: how long a first AMQP connection waits for a broker that refuses it (0: fails at once); --wait-for-broker wins. */
  readonly waitForBrokerMs: number;
}

/** What a node does when it finds itself in a partition (RabbitMQ's cluster_partition_handling, before 4.3). */
export const PARTITION_HANDLINGS = ['ignore', 'pause_minority', 'autoheal'] as const;
export type PartitionHandling = (typeof PARTITION_HANDLINGS)[number];

/**
 * Which feature flags a node enables on its first boot (RabbitMQ decides it then, once: a node
 * that has booted keeps its flags). stable: every stable flag, the broker's default. required:
 * only the flags the broker requires (RabbitMQ 3.11 and later mark them), the stable ones left
 * disabled, for `--fault feature-flags` to enable under traffic (the nodes get an empty
 * RABBITMQ_FEATURE_FLAGS: cluster/entrypoint.sh).
 */
export const FEATURE_FLAG_SETS = ['stable', 'required'] as const;
export type FeatureFlagSet = (typeof FEATURE_FLAG_SETS)[number];

const here = path.dirname(fileURLToPath(import.meta.url));
/** dist/config.js and src/config.ts both sit one level below the project root. */
export const PROJECT_ROOT = path.resolve(here, '..');

export const DEFAULT_CLUSTER_NAME = 'rmq-bench';
export const DEFAULT_PORTS = { amqp: 5672, management: 15672, prometheus: 15692 } as const;

/**
 * Where a cluster's stream ports start when RMQ_BENCH_STREAM_PORT is not set: this far below its
 * AMQP port (5552 for 5672), so that every cluster's ports stay apart as its AMQP ports are.
 */
export const STREAM_PORT_BELOW_AMQP = 120;

/** A cluster's first stream port when none is chosen: its AMQP port less STREAM_PORT_BELOW_AMQP. Pure. */
export function defaultStreamPort(amqpPort: number): number {
  return amqpPort - STREAM_PORT_BELOW_AMQP;
}

/** How many nodes a bench cluster can have: 3 (the default), or 5 (partition rings and bridges, Jepsen's layout). */
export const NODE_COUNTS = [3, 5] as const;
export type NodeCount = (typeof NODE_COUNTS)[number];
export const DEFAULT_NODE_COUNT: NodeCount = 3;

/**
 * The nodes of a cluster: node i listens on amqpPort + i - 1, managementPort + i - 1 and
 * streamPort + i - 1 on loopback. The default cluster's containers are rabbit1..N; another
 * cluster's are <name>-rabbit1..N.
 */
export function nodesFor(
  clusterName: string,
  amqpPort: number,
  managementPort: number,
  count: NodeCount = DEFAULT_NODE_COUNT,
  streamPort: number = defaultStreamPort(amqpPort),
): NodeSpec[] {
  return Array.from({ length: count }, (_, k) => k + 1).map((i) => ({
    name: `rabbit${i}`,
    container: clusterName === DEFAULT_CLUSTER_NAME ? `rabbit${i}` : `${clusterName}-rabbit${i}`,
    nodeName: `rabbit@rabbit${i}`,
    amqpPort: amqpPort + i - 1,
    managementPort: managementPort + i - 1,
    streamPort: streamPort + i - 1,
  }));
}

/** Why a node count is refused, or undefined. Pure. */
export function nodeCountProblem(value: string): string | undefined {
  return (NODE_COUNTS as readonly number[]).includes(Number(value)) && /^\d+$/.test(value.trim())
    ? undefined
    : `is not a node count rmq-bench runs (${NODE_COUNTS.join(' or ')})`;
}

/** The file where `cluster up` records a cluster's node count. */
export function clusterRecordFile(stateDir: string, clusterName: string): string {
  return path.join(stateDir, 'clusters', `${clusterName}.json`);
}

/** What `cluster up` recorded for a cluster: its node count, RabbitMQ line and partition handling (each undefined when not recorded or unreadable). */
export interface ClusterRecord {
  nodes?: NodeCount;
  rabbitmq?: RabbitmqLine;
  partitionHandling?: PartitionHandling;
  featureFlags?: FeatureFlagSet;
  /** Its first ports, as `cluster up` brought it up. */
  amqpPort?: number;
  managementPort?: number;
  prometheusPort?: number;
}

/** What `cluster up` recorded for this cluster ({} when nothing is, or the file is unreadable). */
export function recordedCluster(stateDir: string | undefined, clusterName: string): ClusterRecord {
  if (stateDir === undefined) return {};
  let doc: {
    nodes?: unknown;
    rabbitmq?: unknown;
    partitionHandling?: unknown;
    featureFlags?: unknown;
    amqpPort?: unknown;
    managementPort?: unknown;
    prometheusPort?: unknown;
  };
  try {
    doc = JSON.parse(readFileSync(clusterRecordFile(stateDir, clusterName), 'utf8'));
  } catch {
    return {};
  }
  const among = <T>(list: readonly T[], v: unknown): T | undefined => ((list as readonly unknown[]).includes(v) ? (v as T) : undefined);
  const nodes = among(NODE_COUNTS, doc.nodes);
  const rabbitmq = typeof doc.rabbitmq === 'string' && lineProblem(doc.rabbitmq) === undefined ? (doc.rabbitmq as RabbitmqLine) : undefined;
  const partitionHandling = among(PARTITION_HANDLINGS, doc.partitionHandling);
  const featureFlags = among(FEATURE_FLAG_SETS, doc.featureFlags);
  const port = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v > 0 && v < 65_536 ? v : undefined);
  const ports = { amqpPort: port(doc.amqpPort), managementPort: port(doc.managementPort), prometheusPort: port(doc.prometheusPort) };
  return {
    ...(nodes ? { nodes } : {}),
    ...(rabbitmq ? { rabbitmq } : {}),
    ...(partitionHandling ? { partitionHandling } : {}),
    ...(featureFlags ? { featureFlags } : {}),
    ...Object.fromEntries(Object.entries(ports).filter(([, v]) => v !== undefined)),
  };
}

/** What `cluster up` recorded for this cluster: its node count, or undefined (none recorded, or unreadable). */
export function recordedNodeCount(stateDir: string | undefined, clusterName: string): NodeCount | undefined {
  return recordedCluster(stateDir, clusterName).nodes;
}

function stateDirFrom(env: NodeJS.ProcessEnv): string | undefined {
  if (env.RMQ_BENCH_STATE_DIR) return path.resolve(env.RMQ_BENCH_STATE_DIR);
  if (env.XDG_STATE_HOME) return path.join(path.resolve(env.XDG_STATE_HOME), 'rmq-bench');
  return env.HOME ? path.join(env.HOME, '.local', 'state', 'rmq-bench') : undefined;
}

function lineFrom(value: string | undefined, recorded: ClusterRecord): RabbitmqLine {
  if (value !== undefined && value !== '') {
    const problem = lineProblem(value);
    if (problem) throw new UsageError(`RMQ_BENCH_RABBITMQ=${value} ${problem}`);
    return value as RabbitmqLine;
  }
  return recorded.rabbitmq ?? DEFAULT_RABBITMQ_LINE;
}

function partitionHandlingFrom(value: string | undefined, recorded: ClusterRecord): PartitionHandling | undefined {
  if (value === undefined || value === '') return recorded.partitionHandling;
  return oneOf('RMQ_BENCH_PARTITION_HANDLING', value, PARTITION_HANDLINGS, 'ignore');
}

function featureFlagsFrom(value: string | undefined, recorded: ClusterRecord): FeatureFlagSet {
  if (value === undefined || value === '') return recorded.featureFlags ?? 'stable';
  return oneOf('RMQ_BENCH_FEATURE_FLAGS', value, FEATURE_FLAG_SETS, 'stable');
}

function nodeCountFrom(value: string | undefined, stateDir: string | undefined, clusterName: string): NodeCount {
  if (value !== undefined && value !== '') {
    const problem = nodeCountProblem(value);
    if (problem) throw new UsageError(`RMQ_BENCH_NODES=${value} ${problem}`);
    return Number(value) as NodeCount;
  }
  return recordedNodeCount(stateDir, clusterName) ?? DEFAULT_NODE_COUNT;
}

export const NODES: readonly NodeSpec[] = nodesFor(DEFAULT_CLUSTER_NAME, DEFAULT_PORTS.amqp, DEFAULT_PORTS.management);

/**
 * Why a first port of `span` (the nodes take port, port + 1, ...) is refused, or undefined.
 * Shared by the RMQ_BENCH_*_PORT variables and the cluster commands' port flags. Pure.
 */
export function portProblem(value: string, span = 3): string | undefined {
  const n = Number(value);
  return !/^\d+$/.test(value.trim()) || n < 1 || n + span - 1 > 65_535 ? `is not a port from 1 to ${65_536 - span}` : undefined;
}

/** Why a cluster name is refused, or undefined: it names containers and a compose project (docker's and compose's rules, both). Pure. */
export function clusterNameProblem(value: string): string | undefined {
  return /^[a-z0-9][a-z0-9_-]{0,40}$/.test(value) ? undefined : "is not a name of lower-case letters, digits, '-' and '_' (at most 41)";
}

function portFrom(name: string, value: string | undefined, fallback: number, span = 3): number {
  if (value === undefined || value === '') return fallback;
  const problem = portProblem(value, span);
  if (problem) throw new UsageError(`${name}=${value} ${problem}`);
  return Number(value);
}

/** RMQ_BENCH_STREAM_PORT, else the AMQP port less STREAM_PORT_BELOW_AMQP; one that is no port is a UsageError naming the variable to set. */
function streamPortFrom(value: string | undefined, amqpPort: number, span: number): number {
  if (value !== undefined && value !== '') return portFrom('RMQ_BENCH_STREAM_PORT', value, 0, span);
  const derived = defaultStreamPort(amqpPort);
  if (portProblem(String(derived), span) === undefined) return derived;
  throw new UsageError(`the stream ports below RMQ_BENCH_AMQP_PORT=${amqpPort} (${derived}) are no ports: set RMQ_BENCH_STREAM_PORT`);
}

function clusterNameFrom(value: string | undefined): string {
  if (value === undefined || value === '') return DEFAULT_CLUSTER_NAME;
  const problem = clusterNameProblem(value);
  if (problem) throw new UsageError(`RMQ_BENCH_NAME=${value} ${problem}`);
  return value;
}

/**
 * RMQ_BENCH_COMPOSE_PROJECT once named the compose project apart from the containers, which kept
 * their fixed names: a second project on the same machine could not start (the names were taken).
 * RMQ_BENCH_NAME names both now; the old variable is refused unless it says the same.
 */
function checkComposeProject(value: string | undefined, clusterName: string): void {
  if (value === undefined || value === '' || value === clusterName) return;
  throw new UsageError(
    `RMQ_BENCH_COMPOSE_PROJECT=${value} is no longer read: RMQ_BENCH_NAME names the compose project and the containers (${clusterName} now)`,
    { hint: `unset RMQ_BENCH_COMPOSE_PROJECT; for a second cluster set RMQ_BENCH_NAME=${value} and its ports` },
  );
}

/** cluster_partition_handling on this project's cluster: the one chosen, else the broker's default (ignore) before 4.3; null on 4.3, which has none. Pure. */
export function partitionHandlingOf(config: Pick<Config, 'rabbitmq' | 'partitionHandling'>): PartitionHandling | null {
  return config.rabbitmq === '4.3' ? null : (config.partitionHandling ?? 'ignore');
}

/** The variables docker-compose.yml reads for one cluster's container names and ports. Pure. */
export function composeEnv(config: Config): Record<string, string> {
  const first = config.nodes[0]!;
  const env: Record<string, string> = {
    RMQ_BENCH_PROMETHEUS_PORT: String(config.prometheusPort),
    // The nodes' peer list (cluster/entrypoint.sh writes it into rabbitmq.conf).
    RMQ_BENCH_NODES: String(config.nodes.length),
    // rabbit4 and rabbit5 are in docker-compose.yml's profile 'five'.
    COMPOSE_PROFILES: config.nodes.length > 3 ? 'five' : '',
    // The settings of the line (cluster/entrypoint.sh leaves out what an older one does not accept).
    RMQ_BENCH_RABBITMQ: config.rabbitmq,
    RMQ_BENCH_PARTITION_HANDLING: config.partitionHandling ?? '',
    // rabbitN advertises this + N - 1 to stream clients (cluster/entrypoint.sh).
    RMQ_BENCH_STREAM_PORT: String(first.streamPort),
    RMQ_BENCH_FEATURE_FLAGS: config.featureFlags,
  };
  // Every service's names and ports, also of the nodes this cluster does not run: `cluster down`
  // removes all five, and the compose file's defaults would name another cluster's containers.
  nodesFor(config.clusterName, first.amqpPort, first.managementPort, NODE_COUNTS[NODE_COUNTS.length - 1]!, first.streamPort).forEach((n, i) => {
    env[`RMQ_BENCH_CONTAINER_${i + 1}`] = n.container;
    env[`RMQ_BENCH_AMQP_PORT_${i + 1}`] = String(n.amqpPort);
    env[`RMQ_BENCH_MANAGEMENT_PORT_${i + 1}`] = String(n.managementPort);
    env[`RMQ_BENCH_STREAM_PORT_${i + 1}`] = String(n.streamPort);
  });
  return env;
}

/** A duration variable (30s, 2m; 0 is 0), or the fallback when unset or empty; a bad one is a UsageError naming it. */
function durationFrom(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  return parseDurationMs(value, `${name}=${value}`);
}

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === '') return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`${name}=${value} is not one of ${allowed.join(', ')}`);
}

function composeToolFrom(value: string | undefined): 'v2' | 'v1' | undefined {
  if (value === undefined || value === '' || value === 'auto') return undefined;
  if (value === 'docker compose' || value === 'v2') return 'v2';
  if (value === 'docker-compose' || value === 'v1') return 'v1';
  throw new UsageError(`RMQ_BENCH_COMPOSE=${value} is not one of 'docker compose', 'docker-compose', auto`);
}

/**
 * An on/off variable (RMQ_BENCH_DEBUG, RMQ_BENCH_QUIET): unset, empty, 0, false, no and off are
 * off; anything else is on. `RMQ_BENCH_DEBUG=0` is off, as a user means it.
 */
export function envFlag(value: string | undefined): boolean {
  return value !== undefined && !['', '0', 'false', 'no', 'off'].includes(value.trim().toLowerCase());
}

/** Every RMQ_BENCH_* variable, read when called (never at import time). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const projectRoot = env.RMQ_BENCH_PROJECT_ROOT ? path.resolve(env.RMQ_BENCH_PROJECT_ROOT) : PROJECT_ROOT;
  const clusterName = clusterNameFrom(env.RMQ_BENCH_NAME);
  const stateDir = stateDirFrom(env);
  const nodeCount = nodeCountFrom(env.RMQ_BENCH_NODES, stateDir, clusterName);
  const recorded = recordedCluster(stateDir, clusterName);
  const rabbitmq = lineFrom(env.RMQ_BENCH_RABBITMQ, recorded);
  const line = LINE_SPECS[rabbitmq];
  // A cluster's ports: the variables, else what `cluster up` recorded for it, else the defaults.
  const amqpPort = portFrom('RMQ_BENCH_AMQP_PORT', env.RMQ_BENCH_AMQP_PORT, recorded.amqpPort ?? DEFAULT_PORTS.amqp, nodeCount);
  const managementPort = portFrom('RMQ_BENCH_MANAGEMENT_PORT', env.RMQ_BENCH_MANAGEMENT_PORT, recorded.managementPort ?? DEFAULT_PORTS.management, nodeCount);
  const streamPort = streamPortFrom(env.RMQ_BENCH_STREAM_PORT, amqpPort, nodeCount);
  const prometheusPort = portFrom('RMQ_BENCH_PROMETHEUS_PORT', env.RMQ_BENCH_PROMETHEUS_PORT, recorded.prometheusPort ?? DEFAULT_PORTS.prometheus, 1);
  checkComposeProject(env.RMQ_BENCH_COMPOSE_PROJECT, clusterName);
  return {
    projectRoot,
    composeFile: path.join(projectRoot, 'docker-compose.yml'),
    composeProject: clusterName,
    composeTool: composeToolFrom(env.RMQ_BENCH_COMPOSE),
    definitionsFile: path.join(projectRoot, 'cluster', 'definitions.json'),
    defaultImage: line.officialImage,
    imageOverride: env.RMQ_BENCH_IMAGE || undefined,
    imageSource: oneOf('RMQ_BENCH_IMAGE_SOURCE', env.RMQ_BENCH_IMAGE_SOURCE, ['auto', 'pull', 'build'] as const, 'auto'),
    builtImage: env.RMQ_BENCH_BUILT_IMAGE || line.builtImage,
    debianMirror: env.RMQ_BENCH_DEBIAN_MIRROR || undefined,
    debianSuite: env.RMQ_BENCH_DEBIAN_SUITE || line.debianSuite,
    rabbitmq,
    partitionHandling: partitionHandlingFrom(env.RMQ_BENCH_PARTITION_HANDLING, recorded),
    featureFlags: featureFlagsFrom(env.RMQ_BENCH_FEATURE_FLAGS, recorded),
    host: '127.0.0.1',
    user: env.RMQ_BENCH_USER || 'demo',
    password: env.RMQ_BENCH_PASSWORD || 'demo',
    vhost: '/',
    erlangCookie: env.RMQ_BENCH_ERLANG_COOKIE || 'rmq-bench-erlang-cookie',
    clusterName,
    nodes: nodesFor(clusterName, amqpPort, managementPort, nodeCount, streamPort),
    stateDir,
    prometheusPort,
    waitForBrokerMs: durationFrom('RMQ_BENCH_WAIT_FOR_BROKER', env.RMQ_BENCH_WAIT_FOR_BROKER, 0),
  };
}

/** A cluster chosen on the command line (`cluster up --name b --amqp-port 6672 ...`): what is not given stays as configured. */
export interface ClusterChoice {
  readonly name?: string | undefined;
  readonly amqpPort?: number | undefined;
  readonly managementPort?: number | undefined;
  readonly prometheusPort?: number | undefined;
  /** `cluster up --nodes`: the node count (else the one recorded for the cluster chosen, else 3). */
  readonly nodes?: NodeCount | undefined;
  /** `cluster up --rabbitmq`: the RabbitMQ line (else the one recorded for the cluster chosen, else 4.3). */
  readonly rabbitmq?: RabbitmqLine | undefined;
  /** `cluster up --partition-handling` (else the one recorded for the cluster chosen). */
  readonly partitionHandling?: PartitionHandling | undefined;
  /** `cluster up --feature-flags` (else the one recorded for the cluster chosen, else stable). */
  readonly featureFlags?: FeatureFlagSet | undefined;
}

/** The config's images and suite for another line, keeping what a variable set apart from the line. Pure. */
function forLine(config: Config, rabbitmq: RabbitmqLine): Pick<Config, 'rabbitmq' | 'defaultImage' | 'builtImage' | 'debianSuite'> {
  const was = LINE_SPECS[config.rabbitmq];
  const now = LINE_SPECS[rabbitmq];
  return {
    rabbitmq,
    defaultImage: now.officialImage,
    builtImage: config.builtImage === was.builtImage ? now.builtImage : config.builtImage,
    debianSuite: config.debianSuite === was.debianSuite ? now.debianSuite : config.debianSuite,
  };
}

/** The config for another cluster: its name (containers, compose project), ports, size and version. Pure; the same config when nothing is chosen. */
export function withCluster(config: Config, choice: ClusterChoice): Config {
  if (
    choice.name === undefined &&
    choice.amqpPort === undefined &&
    choice.managementPort === undefined &&
    choice.prometheusPort === undefined &&
    (choice.nodes === undefined || choice.nodes === config.nodes.length) &&
    (choice.rabbitmq === undefined || choice.rabbitmq === config.rabbitmq) &&
    (choice.partitionHandling === undefined || choice.partitionHandling === config.partitionHandling) &&
    (choice.featureFlags === undefined || choice.featureFlags === config.featureFlags)
  ) {
    return config;
  }
  const clusterName = choice.name ?? config.clusterName;
  const first = config.nodes[0]!;
  const same = clusterName === config.clusterName;
  // Another cluster's own count, line and partition handling, as recorded, unless chosen.
  const recorded: ClusterRecord = same ? {} : recordedCluster(config.stateDir, clusterName);
  const count = choice.nodes ?? (same ? (config.nodes.length as NodeCount) : (recorded.nodes ?? DEFAULT_NODE_COUNT));
  const rabbitmq = choice.rabbitmq ?? (same ? config.rabbitmq : (recorded.rabbitmq ?? DEFAULT_RABBITMQ_LINE));
  // Another cluster's own ports, as recorded, unless chosen (a port not recorded: this config's).
  const port = (chosen: number | undefined, own: number, rec: number | undefined): number => chosen ?? (same ? own : (rec ?? own));
  const amqpPort = port(choice.amqpPort, first.amqpPort, recorded.amqpPort);
  // The stream ports follow the AMQP ports, unless this cluster's stay as they are.
  const streamPort = amqpPort === first.amqpPort ? first.streamPort : defaultStreamPort(amqpPort);
  return {
    ...config,
    ...forLine(config, rabbitmq),
    partitionHandling: choice.partitionHandling ?? (same ? config.partitionHandling : recorded.partitionHandling),
    featureFlags: choice.featureFlags ?? (same ? config.featureFlags : (recorded.featureFlags ?? 'stable')),
    clusterName,
    composeProject: clusterName,
    nodes: nodesFor(clusterName, amqpPort, port(choice.managementPort, first.managementPort, recorded.managementPort), count, streamPort),
    prometheusPort: port(choice.prometheusPort, config.prometheusPort, recorded.prometheusPort),
  };
}

/**
 * The config of a cluster `cluster up` recorded on this machine, by name: its ports, size and
 * version as recorded. A UsageError for a name with no record (or none with ports). Pure but for
 * reading the record.
 */
export function recordedClusterConfig(config: Config, name: string): Config {
  const problem = clusterNameProblem(name);
  if (problem) throw new UsageError(`'${name}' ${problem}`);
  if (name === config.clusterName) return config;
  const r = recordedCluster(config.stateDir, name);
  if (r.amqpPort === undefined || r.managementPort === undefined) {
    throw new UsageError(`no cluster '${name}' is recorded on this machine (with its ports)`, {
      hint: `'rmq-bench cluster up --name ${name} ...' records it; 'rmq-bench cluster status --name ${name}' shows one that is up`,
    });
  }
  return withCluster(config, { name, amqpPort: r.amqpPort, managementPort: r.managementPort, prometheusPort: r.prometheusPort });
}

export function nodeByName(config: Config, name: string): NodeSpec | undefined {
  const short = name.includes('@') ? name.slice(name.indexOf('@') + 1) : name;
  return config.nodes.find((n) => n.name === short);
}

export function amqpUrl(config: Config, node: NodeSpec): string {
  return `amqp://${encodeURIComponent(config.user)}:${encodeURIComponent(config.password)}@${config.host}:${node.amqpPort}`;
}

/** The node's native stream protocol URL: rabbitmq-stream://user:password@host:port/vhost. */
export function streamUrl(config: Config, node: NodeSpec): string {
  const e = encodeURIComponent;
  return `rabbitmq-stream://${e(config.user)}:${e(config.password)}@${config.host}:${node.streamPort}/${e(config.vhost)}`;
}

export function managementUrl(config: Config, node: NodeSpec): string {
  return `http://${config.host}:${node.managementPort}`;
}
