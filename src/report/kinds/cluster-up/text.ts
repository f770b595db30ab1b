import type { UpResult } from '../../../cluster/lifecycle/up.js';
import { formatMs } from '../../../util/duration.js';
import { renderTable } from '../../table.js';
import { fitColumns } from '../../text-wrap.js';

/** cluster up's printer (also cluster reset --hard's): result → text. Pure. */

export function renderUp(r: UpResult): string {
  const what = `${r.nodeCount} nodes, RabbitMQ ${r.version ?? '?'}`;
  const head = r.alreadyUp
    ? `cluster already up (${what}), checked in ${formatMs(r.elapsedMs)}`
    : `cluster up (${what}) in ${formatMs(r.elapsedMs)}` +
      (r.image ? `; image ${r.image.image} ${r.image.how}${r.image.how === 'present' ? '' : ` in ${formatMs(r.image.elapsedMs)}`}` : '');
  const added = r.streamCoordinatorRepairs.length === 0 ? '' : r.streamCoordinatorRepairs.map((line) => `\n${line}`).join('');
  const table = renderTable(
    ['node', 'amqp', 'management'],
    r.nodes.map((n) => [n.name, n.amqpUrl, n.managementUrl]),
  );
  return `${fitColumns(`${head}${added}`)}\n${table}\nprometheus: ${r.prometheusUrl}`;
}
