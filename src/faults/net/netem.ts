/** What the latency fault applies with tc netem (cluster/docker/netns.ts), and its defaults. No imports: the CLI checks its options with it. */
export interface NetemSpec {
  /** Added to every packet the node sends. */
  delayMs: number;
  /** Variation of the delay (netem's jitter), 0 for none. */
  jitterMs: number;
  /** Share of the node's packets dropped, in percent (0..100). */
  lossPct: number;
}

export const DEFAULT_NETEM: NetemSpec = { delayMs: 200, jitterMs: 0, lossPct: 0 };

/** What the slow-link fault limits the node's sending to (tc tbf's rate), unless --bandwidth says otherwise. */
export const DEFAULT_BANDWIDTH = '256kbit';

/** A tc rate (256kbit, 1.5mbit, 100kbit) → its bits per second, or undefined when it is not one tbf takes here. Pure. */
export function bandwidthBits(value: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(bit|kbit|mbit|gbit)$/.exec(value.trim().toLowerCase());
  if (!m) return undefined;
  const bits = Number(m[1]) * { bit: 1, kbit: 1e3, mbit: 1e6, gbit: 1e9 }[m[2] as 'bit' | 'kbit' | 'mbit' | 'gbit'];
  return bits >= 8_000 ? bits : undefined;
}
