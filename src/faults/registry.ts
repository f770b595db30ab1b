import { disconnect } from './disconnect.js';
import { featureFlags } from './feature-flags.js';
import { kill } from './kill.js';
import { killAll } from './kill-all.js';
import type { FaultKind } from './kinds.js';
import { membership } from './membership.js';
import { latency } from './net/latency.js';
import { partition } from './net/partition.js';
import { partitionBridge, partitionHalves, partitionRing } from './net/shapes.js';
import { slowLink } from './net/slow-link.js';
import { pause } from './pause.js';
import { quorumLoss } from './quorum-loss.js';
import { rollingRestart } from './rolling-restart.js';
import type { FaultSpec } from './spec.js';
import { stop } from './stop.js';

/**
 * Every fault, by name: one line each. A kind of kinds.ts without its spec here, or a spec under
 * another kind's name, does not compile. Adding a fault: docs/DEVELOPMENT.md, "Adding a fault".
 */
export const FAULTS = {
  kill,
  stop,
  pause,
  disconnect,
  partition,
  'partition-halves': partitionHalves,
  'partition-ring': partitionRing,
  'partition-bridge': partitionBridge,
  latency,
  'slow-link': slowLink,
  'quorum-loss': quorumLoss,
  'rolling-restart': rollingRestart,
  membership,
  'kill-all': killAll,
  'feature-flags': featureFlags,
} as const satisfies { [K in FaultKind]: FaultSpec<K> };

/** Whether a new leader is awaited while the fault is on (the leader's node gone, a majority left to elect one). */
export function awaitsElection(kind: FaultKind): boolean {
  return FAULTS[kind].leader === 'elected-away';
}
