import { EnvironmentError } from '../../errors.js';
import { seededRandom } from '../../util/random.js';
import type { Docker } from '../../cluster/docker/engine.js';
import type { PartitionShape } from '../kinds.js';
import { containerPid, expectRulesGone, type HostRunner, inNetns, partitionRules, peerAddresses } from '../../cluster/docker/netns.js';

/**
 * Partitions of several nodes at once, as Jepsen's nemesis draws them (rabbitmq/jepsen runs
 * four: random halves, fixed halves, majorities-ring and a random node cut off):
 *
 *   partition-halves  a random split into a majority and a minority; the target (the queue's
 *                     leader) is in the minority, so the majority elects a new one.
 *   partition-ring    5 nodes in a random ring, each reaching only its two neighbours: every node
 *                     sees a majority (itself and two others), no two nodes the same one.
 *   partition-bridge  two halves that cannot reach each other, joined by one node that reaches
 *                     both; the target is in a half (not the bridge).
 *
 * A shape is a set of cut links between nodes (planShape, pure); applyCuts drops each cut link's
 * traffic in both nodes' network namespaces (iptables, the same tagged rules as 'partition') and
 * returns the undo, which removes exactly those rules.
 */

/** The fewest nodes each shape is drawn on. */
export const SHAPE_MIN_NODES: Record<PartitionShape, number> = {
  'partition-halves': 3,
  'partition-ring': 5,
  'partition-bridge': 3,
};

interface ShapePlan {
  shape: PartitionShape;
  /** Node pairs that cannot reach each other (short names, each pair sorted). */
  cuts: [string, string][];
  /** For people: "rabbit2 rabbit4 | rabbit1 rabbit3 rabbit5", "ring rabbit1-rabbit4-…", "rabbit1 rabbit2 | rabbit3 | rabbit4 rabbit5". */
  text: string;
}

const pair = (a: string, b: string): [string, string] => (a < b ? [a, b] : [b, a]);

/** Every link between the two groups. */
function cutBetween(left: readonly string[], right: readonly string[]): [string, string][] {
  return left.flatMap((a) => right.map((b) => pair(a, b)));
}

function shuffled(items: readonly string[], rand: () => number): string[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/**
 * The links a shape cuts, for `nodes` (short names, in the cluster's order), with `target` placed
 * where the shape says, the rest drawn by `rand`. Pure; throws a RangeError for a shape that
 * needs more nodes than given, or a target not among them.
 */
export function planShape(shape: PartitionShape, nodes: readonly string[], target: string, rand: () => number): ShapePlan {
  if (nodes.length < SHAPE_MIN_NODES[shape]) throw new RangeError(`'${shape}' needs ${SHAPE_MIN_NODES[shape]} nodes, not ${nodes.length}`);
  if (!nodes.includes(target)) throw new RangeError(`${target} is not one of ${nodes.join(', ')}`);
  const others = shuffled(
    nodes.filter((n) => n !== target),
    rand,
  );
  const sorted = (xs: readonly string[]): string[] => [...xs].sort();
  switch (shape) {
    case 'partition-halves': {
      const minority = sorted([target, ...others.slice(0, Math.floor((nodes.length - 1) / 2) - 1)]);
      const majority = sorted(nodes.filter((n) => !minority.includes(n)));
      return { shape, cuts: cutBetween(minority, majority), text: `${minority.join(' ')} | ${majority.join(' ')}` };
    }
    case 'partition-bridge': {
      const bridge = others[0]!;
      const half = Math.floor((nodes.length - 1) / 2);
      const rest = others.slice(1);
      const left = sorted([target, ...rest.slice(0, half - 1)]);
      const right = sorted(rest.slice(half - 1));
      return { shape, cuts: cutBetween(left, right), text: `${left.join(' ')} | ${bridge} | ${right.join(' ')}` };
    }
    case 'partition-ring': {
      const ring = shuffled(nodes, rand);
      const n = ring.length;
      const cuts: [string, string][] = [];
      for (let i = 0; i < n; i++) {
        for (let j = i + 1; j < n; j++) {
          const d = Math.min(j - i, n - (j - i));
          if (d > 1) cuts.push(pair(ring[i]!, ring[j]!));
        }
      }
      return { shape, cuts, text: `ring ${ring.join('-')}-${ring[0]}` };
    }
  }
}

/** A ShapePlan drawn from a seed in [0, 1) (chaos passes its planned pick: the same seed, the same shape). */
export function planShapeFrom(shape: PartitionShape, nodes: readonly string[], target: string, pick: number): ShapePlan {
  return planShape(shape, nodes, target, seededRandom(Math.floor(pick * 2 ** 32)));
}

/** For each node, the nodes it is cut from. Pure. */
export function cutsByNode(cuts: readonly [string, string][]): Map<string, string[]> {
  const by = new Map<string, string[]>();
  for (const [a, b] of cuts) {
    by.set(a, [...(by.get(a) ?? []), b]);
    by.set(b, [...(by.get(b) ?? []), a]);
  }
  return by;
}

/**
 * Apply the cuts: in each cut node's network namespace, DROP in both directions to the address
 * of every node it is cut from. `containers` maps a short name to its container. Returns the
 * undo, which removes exactly the rules added (on a node restarted since, none are left).
 */
export async function applyCuts(
  docker: Docker,
  cuts: readonly [string, string][],
  containers: ReadonlyMap<string, string>,
  run: HostRunner,
): Promise<() => Promise<void>> {
  const added: { container: string; pid: number; rule: string[] }[] = [];
  const undo = async (): Promise<void> => {
    const errors: unknown[] = [];
    const removed = new Map<string, { pid: number; rules: string[][] }>();
    for (const a of added.reverse()) {
      const now = await containerPid(docker, a.container).catch(() => undefined);
      if (now !== a.pid) continue;
      await inNetns(run, a.pid, ['iptables', '-w', '-D', ...a.rule]).catch((err: unknown) => errors.push(err));
      const entry = removed.get(a.container) ?? { pid: a.pid, rules: [] };
      entry.rules.push(a.rule);
      removed.set(a.container, entry);
    }
    if (errors.length > 0) throw errors[0];
    // Checked on every node touched: none of the rules removed is still there.
    for (const [container, { pid, rules }] of removed) await expectRulesGone(run, pid, container, rules);
  };
  try {
    for (const [node, cutFrom] of cutsByNode(cuts)) {
      const container = containers.get(node);
      if (container === undefined) throw new EnvironmentError(`${node} is not a container of this cluster`);
      const pid = await containerPid(docker, container);
      const peers = await peerAddresses(docker, container);
      for (const other of cutFrom) {
        const otherContainer = containers.get(other);
        const ip = peers.find((p) => p.name === otherContainer)?.ip;
        if (ip === undefined) throw new EnvironmentError(`${container} has no network peer ${otherContainer ?? other} to be cut off from`);
        for (const rule of partitionRules(ip)) {
          await inNetns(run, pid, ['iptables', '-w', '-I', ...rule]);
          added.push({ container, pid, rule });
        }
      }
    }
  } catch (err) {
    await undo().catch(() => undefined);
    throw err;
  }
  return undo;
}
