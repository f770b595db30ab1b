import type { PublishMode } from '../../client/publish-rules.js';

/** The publishing modes bench compares, in the order it runs them by default. No runtime imports: the CLI declares --confirm-mode with it. */
export const BENCH_MODES = ['none', 'tx', 'sync', 'batch', 'async'] as const satisfies readonly PublishMode[];
