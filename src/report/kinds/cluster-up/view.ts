import type { UpResult } from '../../../cluster/lifecycle/up.js';
import { type KindView, none } from '../../kind-view.js';
import { renderUp } from './text.js';

/** `rmq-bench cluster up`: the nodes started (or found up) and clustered, the definitions loaded. */
export const clusterUp: KindView<UpResult> = { shape: null, text: renderUp, charts: none, figures: () => '', reasons: none };
