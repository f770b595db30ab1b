import { versionAtLeast } from '../broker-versions.js';
import { type Config, managementUrl } from '../config.js';
import { errorMessage } from '../errors.js';
import type { Docker } from './engine.js';
import { rabbitState } from './rabbit-state.js';
import { shortNodeName } from './leader.js';
import type { ManagementClient } from './management.js';

/**
 * A partition that outlives its network fault. RabbitMQ before 4.3 keeps its metadata in Mnesia,
 * and with `cluster_partition_handling = ignore` (its default) a partition stays after the
 * network is back: each side carries on alone and the nodes report each other in `partitions`
 * until an operator restarts the nodes of the side they trust less ("Recovering from a network
 * partition" in RabbitMQ's docs). pause_minority and autoheal end it themselves, and 4.3 has no
 * partitions of this kind (Khepri, Raft). So after a partition fault's rules are removed, on such
 * a cluster rmq-bench does what the operator would: it restarts the nodes of the smaller side
 * until no node reports a partition. What they held alone is discarded by RabbitMQ, as it is for
 * the operator: that is the loss a mirrored queue shows.
 */

/** Whether a partition outlives its network fault on this cluster: Mnesia (before 4.3) with partition handling ignore. Pure. */
export function partitionsOutliveFaults(config: Pick<Config, 'rabbitmq' | 'partitionHandling'>): boolean {
  return !versionAtLeast(`${config.rabbitmq}.0`, '4.3') && (config.partitionHandling ?? 'ignore') === 'ignore';
}

/**
 * How long a partition that is still reported after its rules were removed is left to the
 * broker before rmq-bench restarts the smaller side: at once with ignore (the broker never ends
 * it), a minute with pause_minority or autoheal (they end it themselves, and autoheal restarts
 * the losing side; on 3.10 it was seen not to, the partition lasting for good); null on 4.3
 * (Khepri: no such partition). Pure.
 */
export function mendGraceMs(config: Pick<Config, 'rabbitmq' | 'partitionHandling'>): number | null {
  if (versionAtLeast(`${config.rabbitmq}.0`, '4.3')) return null;
  return (config.partitionHandling ?? 'ignore') === 'ignore' ? 0 : AUTOHEAL_GRACE_MS;
}

/** What pause_minority and autoheal are given to end a partition themselves. */
export const AUTOHEAL_GRACE_MS = 60_000;

/** One node's answer to /api/nodes: what it reports of every node, or how it failed to answer. */
export type NodeAnswer =
  | { nodes: readonly { name: string; running: boolean; partitions: readonly string[] }[] }
  /**
   * stopped: no answer, and the node itself says its RabbitMQ application is stopped, not
   * booting (rabbit-state.ts). other: no answer, for any other reason (slow, booting, unreachable).
   */
  | { failed: 'stopped' | 'other' };

/** What the nodes report of the cluster, read from their answers. */
export interface NodeViews {
  /** Short name → the nodes it reports as partitioned from it (short names). A node that does not answer is left out. */
  partitions: Map<string, string[]>;
  /**
   * Short name → the nodes it lists as not running although they answer themselves: a split no
   * node reports as a partition (seen on 3.10 after autoheal). A node that does not answer is left out.
   */
  unseen: Map<string, string[]>;
  /** Short names of the nodes whose RabbitMQ is stopped, by their own word. */
  down: string[];
  /** Every node answered and sees every node running, and none reports a partition. */
  whole: boolean;
}

/** The views from each node's answer (short name → answer; full names are shortened). Pure. */
export function readViews(answers: ReadonlyMap<string, NodeAnswer>): NodeViews {
  const partitions = new Map<string, string[]>();
  const unseen = new Map<string, string[]>();
  const down: string[] = [];
  const answering = [...answers.entries()].filter(([, a]) => 'nodes' in a).map(([name]) => name);
  let whole = answering.length === answers.size;
  for (const [name, a] of answers) {
    if (!('nodes' in a)) {
      if (a.failed === 'stopped') down.push(name);
      continue;
    }
    const self = a.nodes.find((x) => shortNodeName(x.name) === name);
    partitions.set(name, (self?.partitions ?? []).map(shortNodeName));
    const notRunning = a.nodes.filter((x) => !x.running).map((x) => shortNodeName(x.name));
    if (notRunning.length > 0 || a.nodes.length < answers.size) whole = false;
    unseen.set(
      name,
      notRunning.filter((n) => answering.includes(n)),
    );
  }
  if ([...partitions.values()].some((p) => p.length > 0)) whole = false;
  return { partitions, unseen, down: down.sort(), whole };
}

async function nodeViews(config: Config, management: ManagementClient, docker: Docker): Promise<NodeViews> {
  const answers = new Map<string, NodeAnswer>();
  await Promise.all(
    config.nodes.map(async (n) => {
      try {
        const nodes = (await management.requestOn(managementUrl(config, n), 'GET', '/api/nodes')) as {
          name?: string;
          running?: boolean;
          partitions?: unknown;
        }[];
        answers.set(n.name, {
          nodes: nodes.map((x) => ({
            name: String(x.name ?? ''),
            running: x.running === true,
            partitions: Array.isArray(x.partitions) ? x.partitions.map(String) : [],
          })),
        });
      } catch {
        answers.set(n.name, { failed: (await rabbitState(docker, n)) === 'stopped' ? 'stopped' : 'other' });
      }
    }),
  );
  return readViews(answers);
}

/**
 * The nodes to restart: the smaller side of the split one node reports (itself and the nodes it
 * is not partitioned from, against the nodes it is); on a tie the side holding a node of
 * `prefer` (the nodes the fault cut off), else the side that node reports against. Empty when no
 * node reports a partition. A node that alone notices (Mnesia marks the partition where it finds
 * the other side inconsistent) is enough. Pure.
 */
export function sideToRestart(views: ReadonlyMap<string, readonly string[]>, prefer: readonly string[] = []): string[] {
  const all = [...views.keys()];
  const [reporter, against] = [...views.entries()].filter(([, p]) => p.length > 0).sort((a, b) => b[1].length - a[1].length)[0] ?? [];
  if (reporter === undefined || against === undefined) return [];
  const other = [...new Set(against)].filter((n) => n !== reporter);
  const own = [...new Set([reporter, ...all.filter((n) => !other.includes(n))])];
  if (own.length !== other.length) return (own.length < other.length ? own : other).sort();
  return (prefer.some((n) => own.includes(n)) ? own : other).sort();
}

/** How long a node's RabbitMQ may stay stopped (container up) after the fault before it is restarted. */
export const STUCK_MS = 30_000;

/** The nodes down since STUCK_MS or more before `now` (performance.now() readings). Pure. */
export function stuckNodes(downSince: ReadonlyMap<string, number>, now: number): string[] {
  return [...downSince.entries()]
    .filter(([, since]) => now - since >= STUCK_MS)
    .map(([name]) => name)
    .sort();
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * After a partition's rules are removed: on a cluster where partitions outlive their faults,
 * watch until every node sees every other running again; past the grace (mendGraceMs), a
 * partition a node reports restarts the nodes of the smaller side (docker restart: a clean stop,
 * then a start), and a node whose RabbitMQ has stayed stopped STUCK_MS is restarted. Ends when
 * the cluster is whole or `timeoutMs` has passed. `faulted`: the nodes the fault cut off (short names), restarted first
 * on a tie. Returns the nodes restarted (none: the partition ended by itself). Never throws:
 * a node left partitioned is a line on `log`, and the rejoin wait that follows reports it.
 */
export async function mendPartition(
  config: Config,
  management: ManagementClient,
  docker: Docker,
  faulted: readonly string[],
  options: {
    timeoutMs?: number;
    /** false (cluster up's heal): only a partition reported now is ended; the cluster may be starting still. */
    waitForWhole?: boolean;
    /** Instead of mendGraceMs (cluster up: 0, the fault is long over). */
    graceMs?: number;
    log: (line: string) => void;
    info: (line: string) => void;
  },
): Promise<string[]> {
  const defaultGrace = mendGraceMs(config);
  if (defaultGrace === null) return [];
  const graceMs = options.graceMs ?? defaultGrace;
  const handling = config.partitionHandling ?? 'ignore';
  const restarted: string[] = [];
  const timeoutMs = (options.timeoutMs ?? 180_000) + graceMs;
  const started = performance.now();
  const deadline = started + timeoutMs;
  const downSince = new Map<string, number>();
  let splitSince: number | undefined;
  // Until the nodes see each other again (no partition: the end) or report one (then a side is restarted).
  while (performance.now() < deadline) {
    const views = await nodeViews(config, management, docker);
    if (views.whole) return restarted;
    if (options.waitForWhole === false && restarted.length === 0 && [...views.partitions.values()].every((p) => p.length === 0)) return restarted;
    const now = performance.now();
    for (const name of config.nodes.map((n) => n.name)) {
      if (!views.down.includes(name)) downSince.delete(name);
      else if (!downSince.has(name)) downSince.set(name, now);
    }
    const split = [...views.unseen.values()].some((u) => u.length > 0);
    if (!split) splitSince = undefined;
    else splitSince ??= now;
    // pause_minority and autoheal are given their grace to end it themselves.
    const graceOver = now - started >= graceMs;
    const fresh = (names: string[]): string[] => names.filter((n) => !restarted.includes(n));
    let side = graceOver ? fresh(sideToRestart(views.partitions, faulted)) : [];
    let why: 'partition' | 'split' | 'stuck' = 'partition';
    if (side.length === 0 && graceOver && options.waitForWhole !== false) {
      // Nodes that answer but do not see each other running, with no partition reported: the
      // split 3.10's autoheal was seen to leave. Given STUCK_MS to reconnect, then as a partition.
      if (splitSince !== undefined && now - splitSince >= STUCK_MS) {
        side = fresh(sideToRestart(views.unseen, faulted));
        why = 'split';
      }
      // A node whose RabbitMQ stays stopped with its container up: autoheal's loser waiting for a
      // winner that waits for it (seen on 3.10), or pause_minority's pause outlasting the partition.
      if (side.length === 0) {
        side = fresh(stuckNodes(downSince, now));
        why = 'stuck';
      }
    }
    if (side.length === 0) {
      // Not reconnected yet, or restarted and still booting: look again.
      await sleep(1_000);
      continue;
    }
    options.info(
      why === 'stuck'
        ? `RabbitMQ on ${side.join(', ')} stayed stopped ${Math.round(STUCK_MS / 1000)} s with the container up after the network fault ended (RabbitMQ ${config.rabbitmq}, partition handling ${handling}): restarting ${side.length === 1 ? 'it' : 'them'}`
        : why === 'split'
          ? `the nodes answered but did not see each other running ${Math.round((performance.now() - started) / 1000)} s after the network fault ended, with no partition reported (RabbitMQ ${config.rabbitmq}, partition handling ${handling}): restarting ${side.join(', ')}, the smaller side; what it held alone is discarded`
          : handling === 'ignore'
            ? `the partition outlived the network fault (RabbitMQ ${config.rabbitmq}, partition handling ignore): restarting ${side.join(', ')}, the smaller side, as RabbitMQ's docs tell operators to; what it held alone is discarded`
            : `the partition was still reported ${Math.round(graceMs / 1000)} s after the network fault ended (RabbitMQ ${config.rabbitmq}, partition handling ${handling} did not end it): restarting ${side.join(', ')}, the smaller side, as RabbitMQ's docs tell operators to; what it held alone is discarded`,
    );
    for (const name of side) {
      const node = config.nodes.find((n) => n.name === name);
      if (!node) continue;
      try {
        await docker.getContainer(node.container).restart({ t: 10 });
        restarted.push(name);
      } catch (err) {
        options.log(`could not restart ${name} to end the partition: ${errorMessage(err)}`);
        return restarted;
      }
    }
  }
  options.log(
    `the cluster is not whole ${Math.round(timeoutMs / 1000)} s after the partition's rules were removed: 'rmq-bench cluster up' ends a partition left behind`,
  );
  return restarted;
}
