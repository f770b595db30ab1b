import type { Context } from '../context.js';
import { EnvironmentError, InterruptedError, errorMessage } from '../errors.js';
import type { NodeSpec } from '../config.js';
import { systemClock } from '../util/retry.js';
import { execIn, type Docker } from './engine.js';

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

/** The rabbitmqctl commands that raise each alarm and that put the node back to this project's configuration. */
export const ALARM_COMMANDS: Record<AlarmKind, { raise: string[]; clear: string[]; raiseText: string }> = {
  memory: {
    raise: ['rabbitmqctl', 'set_vm_memory_high_watermark', 'absolute', '1MB'],
    clear: ['rabbitmqctl', 'set_vm_memory_high_watermark', CONFIGURED_MEMORY_WATERMARK],
    raiseText: 'vm_memory_high_watermark set to 1 MB (the node uses far more)',
  },
  disk: {
    raise: ['rabbitmqctl', 'set_disk_free_limit', '1000000GB'],
    clear: ['rabbitmqctl', 'set_disk_free_limit', CONFIGURED_DISK_FREE_LIMIT],
    raiseText: 'disk_free_limit set to 1,000,000 GB (far above the free space)',
  },
};

export interface RaisedAlarm {
  kind: AlarmKind;
  /** Erlang node name, rabbit@rabbit1. */
  node: string;
}

/** rabbit_alarm:get_alarms()'s answer, e.g. `[{{resource_limit,memory,rabbit@rabbit1},[]}]`. */
export function parseAlarms(output: string): RaisedAlarm[] {
  const out: RaisedAlarm[] = [];
  for (const m of output.matchAll(/\{resource_limit,\s*(memory|disk),\s*'?([^'},\s]+)'?\s*\}/g)) {
    out.push({ kind: m[1] as AlarmKind, node: m[2]! });
  }
  return out;
}

/** The alarms in force in the cluster, asked of one node (every node knows them all). */
export async function clusterAlarms(docker: Docker, container: string, timeoutMs = 15_000): Promise<RaisedAlarm[]> {
  const r = await execIn(docker, container, ['rabbitmqctl', 'eval', 'rabbit_alarm:get_alarms().'], timeoutMs);
  if (r.exitCode !== 0) throw new EnvironmentError(`rabbitmqctl eval on ${container} exited ${r.exitCode}: ${lastLine(r.output)}`);
  return parseAlarms(r.output);
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop() ?? '';
}

async function rabbitmqctl(docker: Docker, container: string, cmd: string[]): Promise<void> {
  const r = await execIn(docker, container, cmd, 30_000);
  if (r.exitCode !== 0) throw new EnvironmentError(`${cmd.join(' ')} on ${container} exited ${r.exitCode}: ${lastLine(r.output)}`);
}

/** Poll until the alarm is (raised) or is not (cleared) in force; timeoutMs at most. */
async function waitForAlarm(docker: Docker, node: NodeSpec, kind: AlarmKind, raised: boolean, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const alarms = await clusterAlarms(docker, node.container);
    if (alarms.some((a) => a.kind === kind && a.node === node.nodeName) === raised) return;
    if (performance.now() >= deadline) {
      throw new EnvironmentError(
        `the ${kind} alarm on ${node.name} was ${raised ? 'not raised' : 'still in force'} ${Math.round(timeoutMs / 1000)} s after rabbitmqctl`,
      );
    }
    if (signal.aborted && raised) throw new InterruptedError();
    await systemClock.sleep(200);
  }
}

export interface AlarmHandle {
  kind: AlarmKind;
  node: string;
  /** performance.now() when rabbitmqctl was run, and when the node reported the alarm. */
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
export async function raiseAlarm(ctx: Context, node: NodeSpec, kind: AlarmKind, timeoutMs = 15_000): Promise<AlarmHandle> {
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
        await rabbitmqctl(docker, node.container, cmds.clear);
        // Clearing does not listen to Ctrl+C: an alarm left on blocks every publisher of the cluster.
        await waitForAlarm(docker, node, kind, false, 30_000, new AbortController().signal);
        handle.clearedAt = performance.now();
      })()),
  };
  try {
    await rabbitmqctl(docker, node.container, cmds.raise);
    await waitForAlarm(docker, node, kind, true, timeoutMs, ctx.signal);
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
export async function healAlarms(docker: Docker, nodes: readonly NodeSpec[], log: (line: string) => void, info: (line: string) => void): Promise<void> {
  let alarms: RaisedAlarm[] | undefined;
  for (const n of nodes) {
    try {
      alarms = await clusterAlarms(docker, n.container);
      break;
    } catch {
      /* not running: ask the next */
    }
  }
  if (!alarms || alarms.length === 0) return;
  for (const a of alarms) {
    const node = nodes.find((n) => n.nodeName === a.node);
    if (!node) continue;
    try {
      await rabbitmqctl(docker, node.container, ALARM_COMMANDS[a.kind].clear);
      await waitForAlarm(docker, node, a.kind, false, 10_000, new AbortController().signal);
      info(
        `${node.name} had a ${a.kind} alarm: reset ${a.kind === 'memory' ? `vm_memory_high_watermark to ${CONFIGURED_MEMORY_WATERMARK}` : `disk_free_limit to ${CONFIGURED_DISK_FREE_LIMIT}`}, and it cleared`,
      );
    } catch (err) {
      log(`${node.name} has a ${a.kind} alarm that resetting its limit did not clear (publishers on every node stay blocked): ${errorMessage(err)}`);
    }
  }
}
