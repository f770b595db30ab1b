import type { ReplayResult } from '../../../scenarios/broker-tools/dlq-tools.js';
import { n } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { num, obj, opt } from '../../shape-check.js';
import { renderDlqReplay } from './text.js';

/** `rmq-bench dlq replay`: dead letters published back, each removed only after its confirm. */
export const dlqReplay: KindView<ReplayResult> = {
  shape: obj<ReplayResult>({ replayed: opt(num), skipped: opt(num), leftInQueue: opt(num) }),
  text: renderDlqReplay,
  charts: none,
  figures: (d) => `replayed ${n(d.replayed)}, skipped ${n(d.skipped)}, left in the queue ${n(d.leftInQueue)}`,
  reasons: none,
};
