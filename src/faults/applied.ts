import type { ClusterContext } from '../cluster/cluster-ctx.js';
import { errorMessage } from '../errors.js';
import { formatMs } from '../util/duration.js';
import type { FaultKind } from './kinds.js';
import type { NetemSpec } from './net/netem.js';

/** What some faults take besides the node: latency's delay and loss, slow-link's rate, a draw for the choices a fault makes. */
export interface FaultOptions {
  netem?: NetemSpec;
  /** slow-link's rate, as tc takes it (256kbit); default DEFAULT_BANDWIDTH. */
  bandwidth?: string;
  /**
   * A draw in [0, 1) for the choices a fault makes (chaos passes its seeded pick): a partition
   * shape's groups (default Math.random()), quorum-loss's second member (default the first other).
   */
  pick?: number;
}

/** A feature flag the feature-flags fault enabled: how long its `rabbitmqctl enable_feature_flag` took (the CLI's start included), or why it failed. */
export interface EnabledFlag {
  readonly name: string;
  readonly ms: number;
  readonly error?: string;
}

/** What the flags' calls came to, for an error: "a 0.81 s, b failed (…)". Pure. */
export function flagsText(flags: readonly EnabledFlag[]): string {
  return flags.map((f) => `${f.name} ${f.error === undefined ? formatMs(f.ms) : `failed after ${formatMs(f.ms)} (${f.error})`}`).join(', ');
}

/** A fault as applied; restore() undoes it (the fault's heal), once. */
export interface AppliedFault {
  readonly kind: FaultKind;
  /** What it was applied to, for people: a container, "a+b", a partition shape's groups. */
  readonly container: string;
  /** performance.now() when the fault call was issued (a stop takes seconds to return). */
  readonly issuedAt: number;
  /** performance.now() when the fault call returned. */
  readonly appliedAt: number;
  /** Wall-clock time of the same moment. */
  readonly appliedAtIso: string;
  /** A partition shape's groups ("rabbit2 rabbit4 | rabbit1 rabbit3 rabbit5"); absent for the other faults. */
  readonly shape?: string;
  /** feature-flags: each flag it enabled, in turn; absent for the other faults. */
  readonly enabledFlags?: readonly EnabledFlag[];
  restored: boolean;
  restore(): Promise<void>;
}

/**
 * How a fault reaches a node: through dockerode on this project's containers, or through a
 * user's command for a cluster that runs elsewhere (kubectl, ssh, a cloud CLI).
 */
export interface FaultInjector {
  readonly kind: 'docker' | 'command';
  /** One node's fault (a kind with onContainer). nodeName: the Erlang node name the management API reports (rabbit@rabbit2). */
  inject(nodeName: string, kind: FaultKind, options?: FaultOptions): Promise<AppliedFault>;
  /** Throws (EnvironmentError, exit 69; a usage error for too few nodes) when this injector cannot apply kind here: called before a run starts. */
  check(kind: FaultKind): Promise<void>;
}

/** What a fault takes of a command's context: the cluster's, and how faults reach a node. */
export interface FaultContext extends ClusterContext {
  readonly faults: FaultInjector;
}

/** The record of a fault that has just been applied; restore() runs undo once. */
export function appliedFault(kind: FaultKind, container: string, issuedAt: number, undo: () => Promise<void>, shape?: string): AppliedFault {
  const fault: AppliedFault = {
    kind,
    container,
    issuedAt,
    appliedAt: performance.now(),
    appliedAtIso: new Date().toISOString(),
    ...(shape === undefined ? {} : { shape }),
    restored: false,
    async restore() {
      if (fault.restored) return;
      await undo();
      fault.restored = true;
    },
  };
  return fault;
}

/** Several faults applied together (quorum-loss: the leader and a follower killed) as one; restore undoes them all. */
export function combineFaults(kind: FaultKind, faults: readonly AppliedFault[]): AppliedFault {
  const first = faults[0]!;
  const fault: AppliedFault = {
    kind,
    container: faults.map((f) => f.container).join('+'),
    issuedAt: first.issuedAt,
    appliedAt: faults.at(-1)!.appliedAt,
    appliedAtIso: faults.at(-1)!.appliedAtIso,
    restored: false,
    async restore() {
      if (fault.restored) return;
      // Every one is tried; the first failure is the one reported.
      const errors: unknown[] = [];
      for (const f of faults) await f.restore().catch((err: unknown) => errors.push(err));
      if (errors.length > 0) throw errors[0];
      fault.restored = true;
    },
  };
  return fault;
}

/** The links a partition shape cut, for people ("rabbit2 rabbit4 | rabbit1 rabbit3 rabbit5"); null for the other faults. */
export function shapeOf(fault: AppliedFault): string | null {
  return fault.shape ?? null;
}

/**
 * Undo a fault, logging (not throwing) a failure when another error is already on its way:
 * the original error is the one the user must see.
 */
export async function restoreQuietly(fault: AppliedFault, log: (line: string) => void): Promise<void> {
  try {
    await fault.restore();
  } catch (err) {
    log(`could not restore ${fault.container} after '${fault.kind}': ${errorMessage(err)}`);
  }
}
