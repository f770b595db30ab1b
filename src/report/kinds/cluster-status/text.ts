import { shortNodeName } from '../../../cluster/broker/queue-leadership.js';
import type { StatusResult } from '../../../cluster/lifecycle/status.js';
import { renderTable } from '../../table.js';
import { fitColumns } from '../../text-wrap.js';

/** cluster status's printers: result → text. Pure. */

function members(list: string[]): string {
  return list.map(shortNodeName).join(',') || '-';
}

/** 6672-6674 for consecutive ports, else each one. */
function portRange(ports: number[]): string {
  const first = ports[0];
  const consecutive = first !== undefined && ports.every((p, i) => p === first + i);
  return consecutive && ports.length > 1 ? `${first}-${ports.at(-1)}` : ports.join(',');
}

/** Which cluster and where it listens: `cluster rmq-bench-b on 127.0.0.1: AMQP 6672-6674, management 16672-16674, Prometheus 16692`. */
function renderClusterLine(s: Pick<StatusResult, 'cluster' | 'prometheusPort' | 'nodes'>): string {
  const amqp = portRange(s.nodes.map((n) => n.amqpPort));
  const management = portRange(s.nodes.map((n) => n.managementPort));
  return `cluster ${s.cluster} on 127.0.0.1: AMQP ${amqp}, management ${management}, Prometheus ${s.prometheusPort}`;
}

export function renderStatus(s: StatusResult): string {
  const head = renderClusterLine(s);
  const nodes = renderTable(
    ['node', 'container', 'health', 'in cluster', 'version', 'erlang', 'alarms', 'partitions'],
    s.nodes.map((n) => [
      n.name,
      n.container,
      n.health,
      n.running === undefined ? '?' : n.running ? 'running' : 'down',
      n.version ?? '-',
      n.erlangVersion ?? '-',
      n.alarms.join(',') || 'none',
      n.partitions.map(shortNodeName).join(',') || 'none',
    ]),
  );
  const split = s.mend && !s.mend.whole ? `\n\nnot whole: ${s.mend.text}${s.mend.restart.length > 0 ? ` ('rmq-bench cluster up' does this)` : ''}` : '';
  const sc = s.streamCoordinator;
  const problems = [
    ...(sc.stranded.length > 0 ? [`its member on ${members(sc.stranded)} never started again after a kill`] : []),
    ...(sc.outside.length > 0
      ? [`the member on ${members(sc.outside)} runs outside it (its node was forgotten while the coordinator could not record it)`]
      : []),
    ...(sc.members.length > 0 && !sc.majority ? ['it has no majority, so no stream can be declared or elect a writer'] : []),
  ];
  const stranded = problems.length === 0 ? '' : `\n\nstream coordinator: ${problems.join('; ')} ('rmq-bench cluster up' makes it whole)`;
  if (!s.reachable) return `${head}\n${nodes}${fitColumns(split)}${fitColumns(stranded)}\n\nno management endpoint answered: queue leaders unknown`;
  const queues =
    s.queues.length === 0
      ? 'no quorum queues'
      : renderTable(
          ['quorum queue', 'leader', 'members', 'online', 'messages'],
          s.queues.map((q) => [q.name, q.leader ? shortNodeName(q.leader) : 'none', members(q.members), members(q.online), q.messages ?? '-']),
        );
  return `${head}\n${nodes}${fitColumns(split)}${fitColumns(stranded)}\n\n${queues}`;
}
