import type { ImageResult } from '../../../cluster/docker/image.js';
import { type KindView, none } from '../../kind-view.js';

/** `rmq-bench cluster image`: the RabbitMQ image found, pulled or built (--rebuild: built). */
export type ClusterImageResult = ImageResult | { readonly image: string; readonly how: 'built'; readonly version: string; readonly elapsedMs: number };

export const clusterImage: KindView<ClusterImageResult> = { shape: null, text: (r) => `image ${r.image}`, charts: none, figures: () => '', reasons: none };
