import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { UsageError } from './errors.js';

/** One node of the bench cluster: the compose service, its container and its loopback ports. */
export interface NodeSpec {
  /** Service, container and host name: rabbit1..rabbit3. */
  readonly name: string;
  /** Erlang node name: rabbit@rabbit1. */
  readonly nodeName: string;
  readonly amqpPort: number;
  readonly managementPort: number;
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
  readonly host: string;
  readonly user: string;
  readonly password: string;
  readonly vhost: string;
  readonly erlangCookie: string;
  readonly nodes: readonly NodeSpec[];
  readonly prometheusPort: number;
}

export const DEFAULT_IMAGE = 'rabbitmq:4.3-management';
export const BUILT_IMAGE = 'rmq-bench/rabbitmq:4.3';

const here = path.dirname(fileURLToPath(import.meta.url));
/** dist/config.js and src/config.ts both sit one level below the project root. */
export const PROJECT_ROOT = path.resolve(here, '..');

export const NODES: readonly NodeSpec[] = [1, 2, 3].map((i) => ({
  name: `rabbit${i}`,
  nodeName: `rabbit@rabbit${i}`,
  amqpPort: 5671 + i,
  managementPort: 15671 + i,
}));

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

/** Every RMQ_BENCH_* variable, read when called (never at import time). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const projectRoot = env.RMQ_BENCH_PROJECT_ROOT ? path.resolve(env.RMQ_BENCH_PROJECT_ROOT) : PROJECT_ROOT;
  return {
    projectRoot,
    composeFile: path.join(projectRoot, 'docker-compose.yml'),
    composeProject: env.RMQ_BENCH_COMPOSE_PROJECT || 'rmq-bench',
    composeTool: composeToolFrom(env.RMQ_BENCH_COMPOSE),
    definitionsFile: path.join(projectRoot, 'cluster', 'definitions.json'),
    defaultImage: DEFAULT_IMAGE,
    imageOverride: env.RMQ_BENCH_IMAGE || undefined,
    imageSource: oneOf('RMQ_BENCH_IMAGE_SOURCE', env.RMQ_BENCH_IMAGE_SOURCE, ['auto', 'pull', 'build'] as const, 'auto'),
    builtImage: env.RMQ_BENCH_BUILT_IMAGE || BUILT_IMAGE,
    debianMirror: env.RMQ_BENCH_DEBIAN_MIRROR || undefined,
    debianSuite: env.RMQ_BENCH_DEBIAN_SUITE || 'sid',
    host: '127.0.0.1',
    user: env.RMQ_BENCH_USER || 'demo',
    password: env.RMQ_BENCH_PASSWORD || 'demo',
    vhost: '/',
    erlangCookie: env.RMQ_BENCH_ERLANG_COOKIE || 'rmq-bench-erlang-cookie',
    nodes: NODES,
    prometheusPort: 15692,
  };
}

export function nodeByName(config: Config, name: string): NodeSpec | undefined {
  const short = name.includes('@') ? name.slice(name.indexOf('@') + 1) : name;
  return config.nodes.find((n) => n.name === short);
}

export function amqpUrl(config: Config, node: NodeSpec): string {
  return `amqp://${encodeURIComponent(config.user)}:${encodeURIComponent(config.password)}@${config.host}:${node.amqpPort}`;
}

export function managementUrl(config: Config, node: NodeSpec): string {
  return `http://${config.host}:${node.managementPort}`;
}
