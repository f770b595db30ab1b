import type { UpResult } from '../../../cluster/lifecycle/up.js';
import { formatMs } from '../../../util/duration.js';
import { renderTable } from '../../table.js';

/** cluster up's printer (also cluster reset --hard's): result → text. Pure. */

export function renderUp(r: UpResult): string {
  const what = `${r.nodeCount} nodes, RabbitMQ ${r.version ?? '?'}`;
  const head = r.alreadyUp
    ? `cluster already up (${what}), checked in ${formatMs(r.elapsedMs)}`
    : `cluster up (${what}) in ${formatMs(r.elapsedMs)}` +
      (r.image ? `; image ${r.image.image} ${r.image.how}${r.image.how === 'present' ? '' : ` in ${formatMs(r.image.elapsedMs)}`}` : '');
  const added =
    r.streamCoordinatorAddedBack.length === 0
      ? ''
      : `\nthe stream coordinator's member on ${r.streamCoordinatorAddedBack.join(', ')} added back (it never started again after a kill)`;
  const table = renderTable(
    ['node', 'amqp', 'management'],
    r.nodes.map((n) => [n.name, n.amqpUrl, n.managementUrl]),
  );
  return `${head}${added}\n${table}\nprometheus: ${r.prometheusUrl}`;
}
