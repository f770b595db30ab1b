import type { UpResult } from '../../cluster/up.js';
import { renderUp } from '../cluster.js';
import { type KindView, none } from '../kind-view.js';

/** `rmq-bench cluster up`: the nodes started (or found up) and clustered, the definitions loaded. */
export const clusterUp: KindView<UpResult> = { shape: null, text: renderUp, charts: none, figures: () => '', reasons: none };
