import type { WatchView } from '../../../scenarios/traffic/watch.js';
import { type KindView, none } from '../../kind-view.js';
import { renderWatch } from './text.js';

/** `rmq-bench watch --once`: the cluster's queues and nodes at one moment. */
export const watch: KindView<WatchView> = { shape: null, text: (v) => renderWatch(v), charts: none, figures: () => '', reasons: none };
