import type { StatusResult } from '../../../cluster/lifecycle/status.js';
import { type KindView, none } from '../../kind-view.js';
import { renderStatus } from './text.js';

/** `rmq-bench cluster status`: the nodes, their alarms, and each quorum queue's leader and members. */
export const clusterStatus: KindView<StatusResult> = { shape: null, text: renderStatus, charts: none, figures: () => '', reasons: none };
