import amqp from 'amqplib';
import { execa } from 'execa';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterAlarms, type RaisedAlarm } from '../../src/cluster/broker/alarms.js';
import { ManagementClient } from '../../src/cluster/broker/management.js';
import { loadConfig } from '../../src/config.js';
import { schemaChecked } from './schema.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin', 'rmq-bench.js');

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Run the real binary (built code), as a user would. */
export async function runCli(args: string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<CliResult> {
  const r = await execa('node', [BIN, ...args], {
    cwd: ROOT,
    env: { RMQ_BENCH_QUIET: '1', ...options.env },
    reject: false,
    stdin: 'ignore',
    timeout: options.timeoutMs ?? 300_000,
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

export function parseJson<T>(r: CliResult): T {
  let doc: T;
  try {
    doc = JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not one JSON document (exit ${r.exitCode}).\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
  return schemaChecked(doc);
}

export const USER = 'demo';
export const PASSWORD = 'demo';

/**
 * The cluster these tests run against, from the same RMQ_BENCH_NAME and RMQ_BENCH_*_PORT
 * variables the binary reads: the default one (rabbit1..3 on 5672-5674), or a second one beside
 * it (scripts/test-integration.sh runs each tier's integration tests in shards, one per cluster).
 */
const cluster = loadConfig(process.env);
/** The nodes' host names, as the broker and rmq-bench's reports name them: rabbit1..3. */
export const NODES = cluster.nodes.map((n) => n.name);
/** Their Docker containers: rabbit1..3, or <name>-rabbit1..3 for a second cluster. */
export const CONTAINERS = cluster.nodes.map((n) => n.container);
/** A node's container, from its host name (rabbit2) or Erlang name (rabbit@rabbit2). */
export function containerOf(node: string): string {
  const host = node.includes('@') ? node.slice(node.indexOf('@') + 1) : node;
  const i = NODES.indexOf(host);
  if (i === -1) throw new Error(`${node} is not a node of this cluster (${NODES.join(', ')})`);
  return CONTAINERS[i]!;
}
/** What a container name adds to a host name: '' for the default cluster, 'rmq-bench-b-' for the second. */
export const CONTAINER_PREFIX = CONTAINERS[0]!.slice(0, CONTAINERS[0]!.length - NODES[0]!.length);
export const AMQP_PORTS = cluster.nodes.map((n) => n.amqpPort);
export const MGMT_PORTS = cluster.nodes.map((n) => n.managementPort);
export const MGMT = `http://127.0.0.1:${MGMT_PORTS[0]}`;

/** The alarms in force in this cluster, asked first of `node` (rabbit1), as rmq-bench asks (the management API's alarm check). */
export function alarmsOf(node: string = NODES[0]!): Promise<RaisedAlarm[]> {
  return clusterAlarms(ManagementClient.fromConfig(cluster), node);
}
export const AMQP_URLS = AMQP_PORTS.map((p) => `amqp://${USER}:${PASSWORD}@127.0.0.1:${p}`);
export const MGMT_URLS = MGMT_PORTS.map((p) => `http://${USER}:${PASSWORD}@127.0.0.1:${p}`);

/** A GET of the management API of `node` (rabbit1 unless named: another when rabbit1 may be out). */
export async function mgmtGet<T>(p: string, node: string = NODES[0]!): Promise<T> {
  const get = () =>
    fetch(`http://127.0.0.1:${MGMT_PORTS[NODES.indexOf(node)]}${p}`, {
      headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` },
      signal: AbortSignal.timeout(10_000),
    });
  // A kept-alive connection the node closed as idle just as fetch reused it fails with "other side
  // closed" (UND_ERR_SOCKET) before the request reached the node: that GET is sent once more, on a
  // new connection. Any other failure, or a second one, is the test's.
  const res = await get().catch((err: unknown) => {
    if ((err as { cause?: { code?: string } }).cause?.code === 'UND_ERR_SOCKET') return get();
    throw err;
  });
  if (!res.ok) throw new Error(`GET ${p}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** /api/overview's count of messages dropped as unroutable: cluster-wide, since the nodes started; the key is absent while it is 0. */
export async function droppedUnroutable(): Promise<number> {
  return (await mgmtGet<{ message_stats?: { drop_unroutable?: number } }>('/api/overview')).message_stats?.drop_unroutable ?? 0;
}

export function uniqueName(prefix: string): string {
  return `it.${prefix}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/**
 * Poll until fn's assertions pass or the deadline passes (then its last failure is thrown).
 * For management API fields that are eventually consistent (stats refresh after a failover).
 */
/**
 * The queues of vhost '/' as the broker's metadata store records them, read on `node` with
 * `rabbitmqctl list_queues` in its container: the record, not the management API's statistics
 * (a queue's `members` there is what its leader last emitted, every few seconds).
 */
export async function queueRecords(node: string): Promise<{ name: string; type: string; members?: string[] }[]> {
  const r = await execa('docker', ['exec', containerOf(node), 'rabbitmqctl', 'list_queues', '-q', '--formatter', 'json', 'name', 'type', 'members'], {
    reject: false,
    stdin: 'ignore',
    timeout: 60_000,
  });
  if (r.exitCode !== 0) throw new Error(`rabbitmqctl list_queues on ${node} exit ${r.exitCode}: ${String(r.stderr)}`);
  const out = String(r.stdout).trim();
  return out === '' ? [] : (JSON.parse(out) as { name: string; type: string; members?: string[] }[]);
}

export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 15_000, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/**
 * A confirm channel on rabbit1 for the test's own setup and checks; the connection is always
 * closed. Connecting has a deadline: a paused node's port still accepts (docker's proxy) and would
 * never answer the handshake.
 */
export async function withChannel<T>(fn: (ch: amqp.ConfirmChannel) => Promise<T>): Promise<T> {
  const conn = await amqp.connect(AMQP_URLS[0]!, { timeout: 10_000 });
  try {
    return await fn(await conn.createConfirmChannel());
  } finally {
    await conn.close();
  }
}

/** A TCP port nobody listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
