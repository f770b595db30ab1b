import type { ResetResult } from '../../../cluster/lifecycle/reset.js';
import type { UpResult } from '../../../cluster/lifecycle/up.js';
import { type KindView, none } from '../../kind-view.js';
import { renderUp } from '../cluster-up/text.js';
import { renderReset } from './text.js';

/** `rmq-bench cluster reset`: a clean state (ResetResult); with --hard, the cluster removed and started afresh. */
export type ClusterResetResult = ResetResult | { readonly hard: true; readonly elapsedMs: number; readonly up: UpResult };

export const clusterReset: KindView<ClusterResetResult> = {
  shape: null,
  text: (r) => ('up' in r ? renderUp(r.up) : renderReset(r)),
  charts: none,
  figures: () => '',
  reasons: none,
};
