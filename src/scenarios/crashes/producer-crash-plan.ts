/**
 * producer-crash's plan and the child's protocol, pure: where each run's SIGKILLs (and its leader
 * fault) fall, from a seed, and the lines the child producer prints for the harness.
 */
import { seededRandom } from '../../util/random.js';

interface KillPlan {
  /** Positions (events past) at which the child is SIGKILLed, strictly ascending, within 5–95 % of count. */
  killAt: number[];
  /** Position at which the leader is faulted, within 20–70 % of count. */
  faultAt: number;
}

/**
 * The kill points of one run, from the seed and the run number: both modes of a run get the same
 * plan, so they are compared on the same kills. Pure.
 */
export function killPlan(seed: number, run: number, count: number, kills: number): KillPlan {
  const random = seededRandom((Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(run, 0x85ebca6b)) >>> 0);
  const { lo, span } = killWindow(count);
  if (kills > span) throw new RangeError(`${kills} kill points do not fit in ${span} positions (count ${count})`);
  const chosen = new Set<number>();
  while (chosen.size < kills) chosen.add(lo + Math.floor(random() * span));
  const faultAt = Math.max(1, Math.floor(count * (0.2 + 0.5 * random())));
  return { killAt: [...chosen].sort((a, b) => a - b), faultAt };
}

/** Where kill points may fall: positions lo .. lo + span - 1, within 5–95 % of count. */
function killWindow(count: number): { lo: number; span: number } {
  const lo = Math.max(1, Math.ceil(count * 0.05));
  const hi = Math.max(lo, Math.floor(count * 0.95));
  return { lo, span: hi - lo + 1 };
}

/** The most kills `count` events allow (kill points are distinct, within 5–95 %). */
export function maxKills(count: number): number {
  return killWindow(count).span;
}

export type ChildLine = { kind: 'at'; n: number } | { kind: 'sent'; n: number };

/** A line of the child's stdout: `at <n>` (its position) or `sent <n>` (naive: its log line). Pure. */
export function parseChildLine(line: string): ChildLine | undefined {
  const m = /^(at|sent) (\d{1,15})$/.exec(line.trim());
  return m ? { kind: m[1] as 'at' | 'sent', n: Number(m[2]) } : undefined;
}
