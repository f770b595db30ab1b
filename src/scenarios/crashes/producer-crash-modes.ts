/** The producers producer-crash kills: naive (events in memory) and outbox. No imports: the CLI declares --modes with it. */
export const PRODUCER_CRASH_MODES = ['naive', 'outbox'] as const;
export type ProducerCrashMode = (typeof PRODUCER_CRASH_MODES)[number];
