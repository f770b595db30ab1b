/** RabbitMQ 4.3's delayed retry as the demo sets it: which returns are delayed, and how it is set. No imports: the CLI declares --type and --via with them. */
export const DELAYED_RETRY_TYPES = ['all', 'failed', 'returned'] as const;
export type DelayedRetryType = (typeof DELAYED_RETRY_TYPES)[number];
export const DELAYED_RETRY_VIA = ['policy', 'arguments'] as const;
export type DelayedRetryVia = (typeof DELAYED_RETRY_VIA)[number];
