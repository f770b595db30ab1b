/** How consumer-crash's consumer acks: autoack, manual ack, manual ack with an idempotent store. No imports: the CLI declares --modes with it. */
export const CRASH_MODES = ['autoack', 'manual', 'idempotent'] as const;
export type CrashMode = (typeof CRASH_MODES)[number];
