/** The ways a message reaches the DLQ, as x-first-death-reason names them, in the demo's order. No imports: the CLI declares --reason with it. */
export const DLQ_REASONS = ['delivery_limit', 'rejected', 'expired', 'maxlen'] as const;
export type DlqReason = (typeof DLQ_REASONS)[number];
