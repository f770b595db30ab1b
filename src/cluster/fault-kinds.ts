/** The faults rmq-bench can apply to a node (what each does: FAULT_DESCRIPTIONS in faults.ts). No imports: the CLI declares its options with it. */
export const FAULT_KINDS = ['kill', 'stop', 'pause', 'disconnect', 'partition', 'latency', 'quorum-loss'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
