import type { FaultKind } from '../../faults/kinds.js';
import type { ChaosTarget } from './chaos-plan.js';

/**
 * chaos's profiles: a known schedule by name, for the options the user did not give. `jepsen` is
 * rabbitmq/jepsen's: a partition of a random shape (halves, a majorities ring, a bridge, one node
 * cut off) on a random node, held 10 s (its other setting: --hold 30s), with 20 s of calm between,
 * for 180 s, on 5 nodes (the ring needs them: on 3 it is refused with the way to 5). Pure data.
 */

export const CHAOS_PROFILES = ['jepsen'] as const;
export type ChaosProfile = (typeof CHAOS_PROFILES)[number];

interface ProfileSettings {
  durationMs: number;
  holdMs: number;
  /** Calm between a heal and the next fault: the interval is hold + calm unless --interval is given. */
  calmMs: number;
  faults: FaultKind[];
  targets: ChaosTarget[];
}

const PROFILE_SETTINGS: Record<ChaosProfile, ProfileSettings> = {
  jepsen: {
    durationMs: 180_000,
    holdMs: 10_000,
    calmMs: 20_000,
    faults: ['partition-halves', 'partition-ring', 'partition-bridge', 'partition'],
    targets: ['random'],
  },
};

/** What a profile sets, under what the user gave (given: the options given on the command line). Pure. */
export function applyProfile<T extends { duration: number; hold: number; interval: number; faults?: FaultKind[]; targets: ChaosTarget[] }>(
  profile: ChaosProfile,
  o: T,
  given: ReadonlySet<string>,
): T {
  const p = PROFILE_SETTINGS[profile];
  const hold = given.has('hold') ? o.hold : p.holdMs;
  return {
    ...o,
    duration: given.has('duration') ? o.duration : p.durationMs,
    hold,
    interval: given.has('interval') ? o.interval : hold + p.calmMs,
    faults: given.has('faults') ? o.faults : p.faults,
    targets: given.has('targets') ? o.targets : p.targets,
  };
}
