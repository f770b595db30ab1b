import type { ClusterContext } from '../cluster-ctx.js';
import { BrokerUnavailableError, EnvironmentError, InterruptedError, errorMessage } from '../../errors.js';
import type { NodeSpec } from '../../config.js';
import { systemClock } from '../../util/retry.js';
import type { Docker } from '../docker/engine.js';
import { callNode, type NodeCall } from './erl-call.js';
import { HttpError, type ManagementClient } from './management.js';

/**
 * Resource alarms, raised on purpose (alarm-demo) and cleared again: a memory high watermark
 * set far below what the node uses, or a disk free limit set far above the free space. An
 * alarm on one node blocks publishers on every node (rabbit_alarm is cluster-wide); RabbitMQ
 * blocks a connection at its first publish during the alarm (rabbit_reader publish_received),
 * so a connection that only consumes goes on.
 */

export const ALARM_KINDS = ['memory', 'disk'] as const;
export type AlarmKind = (typeof ALARM_KINDS)[number];

/** RabbitMQ's default vm_memory_high_watermark (cluster/rabbitmq.conf sets none; a unit test checks). */
export const CONFIGURED_MEMORY_WATERMARK = '0.6';
/** cluster/rabbitmq.conf's disk_free_limit.absolute (a unit test checks that they agree). */
export const CONFIGURED_DISK_FREE_LIMIT = '200MB';

/**
 * The calls that raise each alarm and that put the node back to this project's configuration:
 * the functions rabbitmqctl set_vm_memory_high_watermark and set_disk_free_limit call, made
 * through erl_call (src/cluster/broker/erl-call.ts), with those rabbitmqctl commands for an image
 * without erl_call.
 */
export const ALARM_COMMANDS: Record<AlarmKind, { raise: NodeCall; clear: NodeCall; raiseText: string }> = {
  memory: {
    raise: {
      expr: 'ok = vm_memory_monitor:set_vm_memory_high_watermark({absolute, "1MB"}).',
      cli: ['rabbitmqctl', 'set_vm_memory_high_watermark', 'absolute', '1MB'],
    },
    clear: {
      expr: `ok = vm_memory_monitor:set_vm_memory_high_watermark(${CONFIGURED_MEMORY_WATERMARK}).`,
      cli: ['rabbitmqctl', 'set_vm_memory_high_watermark', CONFIGURED_MEMORY_WATERMARK],
    },
    raiseText: 'vm_memory_high_watermark set to 1 MB (the node uses far more)',
  },
  disk: {
    raise: { expr: 'ok = rabbit_disk_monitor:set_disk_free_limit("1000000GB").', cli: ['rabbitmqctl', 'set_disk_free_limit', '1000000GB'] },
    clear: {
      expr: `ok = rabbit_disk_monitor:set_disk_free_limit("${CONFIGURED_DISK_FREE_LIMIT}").`,
      cli: ['rabbitmqctl', 'set_disk_free_limit', CONFIGURED_DISK_FREE_LIMIT],
    },
    raiseText: 'disk_free_limit set to 1,000,000 GB (far above the free space)',
  },
};

export interface RaisedAlarm {
  kind: AlarmKind;
  /** Erlang node name, rabbit@rabbit1. */
  node: string;
}

/** How the alarm check names each resource. */
const ALARM_RESOURCES: Readonly<Record<string, AlarmKind>> = { memory: 'memory', 'disk space': 'disk', disk: 'disk' };

/** The management API's cluster-wide alarm check: GET it of any node (every node knows them all). */
const ALARMS_CHECK_PATH = '/api/health/checks/alarms';

/**
 * The alarm check's answer: 200 `{"status":"ok"}` (no alarm), or 503 `{"status":"failed",
 * "reason":"There are alarms in effect in the cluster","alarms":[{"node":"rabbit@rabbit1",
 * "resource":"memory"}]}` (RabbitMQ 4.3.6; a disk alarm's resource is "disk space"). undefined:
 * not that check's answer (a node that is still booting answers 503 without the list).
 */
export function parseAlarmsCheck(body: unknown): RaisedAlarm[] | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as { status?: unknown; alarms?: unknown };
  if (b.status === 'ok') return [];
  if (!Array.isArray(b.alarms)) return undefined;
  const out: RaisedAlarm[] = [];
  for (const a of b.alarms as { node?: unknown; resource?: unknown }[]) {
    const kind = typeof a?.resource === 'string' ? ALARM_RESOURCES[a.resource] : undefined;
    if (typeof a?.node === 'string' && kind) out.push({ kind, node: a.node });
  }
  return out;
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The alarms in force in the cluster, asked of the management API: a request of a few ms, where
 * `rabbitmqctl eval` in a container would start a whole Erlang VM for the same question. Asks
 * `preferNode` (short name: rabbit1) first, then the others, until one answers.
 */
export async function clusterAlarms(mgmt: ManagementClient, preferNode?: string): Promise<RaisedAlarm[]> {
  const endpoints = [...mgmt.endpoints].sort((a, b) => Number(b.node === preferNode) - Number(a.node === preferNode));
  const failures: string[] = [];
  for (const ep of endpoints) {
    try {
      const alarms = parseAlarmsCheck(await mgmt.requestOn(ep.url, 'GET', ALARMS_CHECK_PATH));
      if (alarms) return alarms;
      failures.push(`${ep.node}: not an alarm check's answer`);
    } catch (err) {
      const alarms = err instanceof HttpError && err.status === 503 ? parseAlarmsCheck(jsonOrUndefined(err.body)) : undefined;
      if (alarms) return alarms;
      failures.push(`${ep.node}: ${errorMessage(err)}`);
    }
  }
  throw new BrokerUnavailableError(`no node answered the alarm check (${failures.join('; ')})`, {
    hint: "is the cluster up? 'rmq-bench cluster up' starts it",
  });
}

async function setLimit(docker: Docker, node: NodeSpec, call: NodeCall): Promise<void> {
  await callNode(docker, node.container, node.nodeName, call, 30_000);
}

/** Poll until the alarm is (raised) or is not (cleared) in force; timeoutMs at most. */
async function waitForAlarm(mgmt: ManagementClient, node: NodeSpec, kind: AlarmKind, raised: boolean, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const alarms = await clusterAlarms(mgmt, node.name);
    if (alarms.some((a) => a.kind === kind && a.node === node.nodeName) === raised) return;
    if (performance.now() >= deadline) {
      throw new EnvironmentError(
        `the ${kind} alarm on ${node.name} was ${raised ? 'not raised' : 'still in force'} ${Math.round(timeoutMs / 1000)} s after its limit was set`,
      );
    }
    if (signal.aborted && raised) throw new InterruptedError();
    await systemClock.sleep(200);
  }
}

export interface AlarmHandle {
  kind: AlarmKind;
  node: string;
  /** performance.now() when the limit was set, and when the node reported the alarm. */
  commandAt: number;
  raisedAt: number;
  /** Set by clear(): when the clear command ran, and when the node no longer reported the alarm. */
  clearCommandAt?: number;
  clearedAt?: number;
  /** Puts the node back to this project's configuration and waits until the alarm is gone; once (later calls return the first). */
  clear(): Promise<void>;
}

/**
 * Raise `kind` on `node` and wait (timeoutMs) until the cluster reports it. The caller clears it
 * in a finally; a raise that fails half-way is cleared here. Ctrl+C while waiting: cleared, then
 * InterruptedError.
 */
export async function raiseAlarm(ctx: ClusterContext, node: NodeSpec, kind: AlarmKind, timeoutMs = 15_000): Promise<AlarmHandle> {
  const docker = await ctx.docker();
  const cmds = ALARM_COMMANDS[kind];
  let clearing: Promise<void> | undefined;
  const handle: AlarmHandle = {
    kind,
    node: node.name,
    commandAt: performance.now(),
    raisedAt: Number.NaN,
    clear: () =>
      (clearing ??= (async () => {
        handle.clearCommandAt = performance.now();
        await setLimit(docker, node, cmds.clear);
        // Clearing does not listen to Ctrl+C: an alarm left on blocks every publisher of the cluster.
        await waitForAlarm(ctx.management, node, kind, false, 30_000, new AbortController().signal);
        handle.clearedAt = performance.now();
      })()),
  };
  try {
    await setLimit(docker, node, cmds.raise);
    await waitForAlarm(ctx.management, node, kind, true, timeoutMs, ctx.signal);
    handle.raisedAt = performance.now();
    return handle;
  } catch (err) {
    await handle.clear().catch((e: unknown) => ctx.log(`could not clear the ${kind} alarm on ${node.name}: ${errorMessage(e)}`));
    throw err;
  }
}

/**
 * cluster up: an alarm in force (a demo killed before it cleared its own, or a node really short
 * of memory or disk) is reset to this project's configuration; one that stays is reported. Never
 * throws (cluster up goes on).
 */
export async function healAlarms(
  docker: Docker,
  mgmt: ManagementClient,
  nodes: readonly NodeSpec[],
  log: (line: string) => void,
  info: (line: string) => void,
): Promise<void> {
  const alarms = await clusterAlarms(mgmt).catch((err: unknown) => {
    log(`could not ask the cluster for its alarms: ${errorMessage(err)}`);
    return [];
  });
  if (alarms.length === 0) return;
  for (const a of alarms) {
    const node = nodes.find((n) => n.nodeName === a.node);
    if (!node) continue;
    try {
      await setLimit(docker, node, ALARM_COMMANDS[a.kind].clear);
      await waitForAlarm(mgmt, node, a.kind, false, 10_000, new AbortController().signal);
      info(
        `${node.name} had a ${a.kind} alarm: reset ${a.kind === 'memory' ? `vm_memory_high_watermark to ${CONFIGURED_MEMORY_WATERMARK}` : `disk_free_limit to ${CONFIGURED_DISK_FREE_LIMIT}`}, and it cleared`,
      );
    } catch (err) {
      log(`${node.name} has a ${a.kind} alarm that resetting its limit did not clear (publishers on every node stay blocked): ${errorMessage(err)}`);
    }
  }
}
