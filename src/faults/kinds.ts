/** The faults rmq-bench can apply to a node (what each does: FAULT_DESCRIPTIONS in injector.ts). No imports: the CLI declares its options with it. */
export const FAULT_KINDS = [
  'kill',
  'stop',
  'pause',
  'disconnect',
  'partition',
  'partition-halves',
  'partition-ring',
  'partition-bridge',
  'latency',
  'slow-link',
  'quorum-loss',
  'rolling-restart',
  'membership',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The partitions of several nodes at once (partition-shapes.ts draws them). */
export const PARTITION_SHAPES = ['partition-halves', 'partition-ring', 'partition-bridge'] as const satisfies readonly FaultKind[];
export type PartitionShape = (typeof PARTITION_SHAPES)[number];

export function isPartitionShape(kind: FaultKind): kind is PartitionShape {
  return (PARTITION_SHAPES as readonly string[]).includes(kind);
}
