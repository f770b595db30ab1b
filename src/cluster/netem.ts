/** What the latency fault applies with tc netem (netfaults.ts), and its defaults. No imports: the CLI checks its options with it. */
export interface NetemSpec {
  /** Added to every packet the node sends. */
  delayMs: number;
  /** Variation of the delay (netem's jitter), 0 for none. */
  jitterMs: number;
  /** Share of the node's packets dropped, in percent (0..100). */
  lossPct: number;
}

export const DEFAULT_NETEM: NetemSpec = { delayMs: 200, jitterMs: 0, lossPct: 0 };
