import { formatMs } from '../../../util/duration.js';
import { type KindView, none } from '../../kind-view.js';

/** `rmq-bench cluster down`: the containers removed (and with --volumes their data). */
export interface ClusterDownResult {
  readonly elapsedMs: number;
  readonly volumes: boolean;
}

export const clusterDown: KindView<ClusterDownResult> = {
  shape: null,
  text: (r) => `cluster down in ${formatMs(r.elapsedMs)}`,
  charts: none,
  figures: () => '',
  reasons: none,
};
