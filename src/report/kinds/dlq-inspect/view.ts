import type { DeadLetterRow } from '../../../scenarios/broker-tools/dlq-tools.js';
import { n, s } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { num, obj, opt, str } from '../../shape-check.js';
import { renderDlqInspect } from './text.js';

/** `rmq-bench dlq inspect`: the dead letters in a queue, left in place. */
export interface DlqInspectResult {
  readonly queue: string;
  readonly rows: DeadLetterRow[];
  readonly total: number;
}

export const dlqInspect: KindView<DlqInspectResult> = {
  shape: obj<DlqInspectResult>({ queue: opt(str), total: opt(num) }),
  text: renderDlqInspect,
  charts: none,
  figures: (d) => `${n(d.total)} messages in ${s(d.queue)}`,
  reasons: none,
};
