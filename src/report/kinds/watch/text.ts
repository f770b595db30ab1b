import { shortNodeName } from '../../../cluster/broker/queue-leadership.js';
import type { WatchQueueRow, WatchView } from '../../../scenarios/traffic/watch.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

/** watch view → text. Pure: the command decides whether to redraw (TTY) or append lines. */

const count = (n: number | null): string => (n === null ? '-' : String(n));
const rate = (n: number | null): string => (n === null ? '-' : n.toFixed(1));
const time = (iso: string): string => iso.slice(11, 19);

function membersCell(q: WatchQueueRow): string {
  if (q.members.length === 0) return '-';
  return `${q.online.length}/${q.members.length}`;
}

export function renderWatch(v: WatchView, options: { live?: boolean } = {}): string {
  const out: string[] = [];
  const via = v.answeringNode && shortNodeName(v.answeringNode) !== v.answeredBy.node ? ` = ${v.answeringNode}` : '';
  out.push(`rmq-bench watch  ${time(v.at)}  answered by ${v.answeredBy.node}${via} (${v.answeredBy.url})  RabbitMQ ${v.cluster.version ?? '?'}`);
  out.push(
    renderTable(
      ['node', 'state', 'alarms', 'partitions'],
      v.nodes.map((n) => [
        shortNodeName(n.name),
        n.running ? 'running' : 'DOWN',
        [n.memAlarm ? 'memory' : '', n.diskAlarm ? 'disk' : ''].filter(Boolean).join(',') || 'none',
        n.partitions.map(shortNodeName).join(',') || 'none',
      ]),
    ),
  );
  out.push('');
  out.push(
    v.queues.length === 0
      ? 'no queues'
      : renderTable(
          ['queue', 'type', 'ready', 'unacked', 'delayed', 'consumers', 'publish/s', 'deliver/s', 'ack/s', 'leader', 'online'],
          v.queues.map((q) => [
            q.vhost === '/' ? q.name : `${q.vhost}/${q.name}`,
            q.role === 'work' ? q.type : `${q.type} (${q.role})`,
            count(q.ready),
            count(q.unacked),
            count(q.delayed),
            count(q.consumers),
            rate(q.publishRate),
            rate(q.deliverRate),
            rate(q.ackRate),
            q.leader ?? (q.type === 'quorum' ? 'NONE' : '-'),
            membersCell(q),
          ]),
        ),
  );
  out.push('');
  out.push(v.alerts.length === 0 ? 'alerts: none' : ['alerts:', ...v.alerts.map((a) => `  ! ${a.kind}: ${a.message}`)].join('\n'));
  out.push(`(figures from the management API, which refreshes them about every 5 s${options.live ? '; Ctrl+C stops' : ''})`);
  return fitLines(out);
}

/** One line per refresh, for a log (stderr not a TTY). */
export function renderWatchLine(v: WatchView): string {
  const sum = (f: (q: WatchQueueRow) => number | null): number => v.queues.reduce((s, q) => s + (f(q) ?? 0), 0);
  const running = v.nodes.filter((n) => n.running).length;
  const alerts = v.alerts.length === 0 ? 'no alert' : v.alerts.map((a) => `${a.kind}: ${a.message}`).join(' | ');
  return (
    `${time(v.at)} ${v.answeredBy.node}: nodes ${running}/${v.nodes.length} running; ${v.queues.length} queues, ` +
    `${sum((q) => q.ready)} ready, ${sum((q) => q.unacked)} unacked, ${sum((q) => q.delayed)} delayed; ` +
    `publish ${sum((q) => q.publishRate).toFixed(1)}/s, deliver ${sum((q) => q.deliverRate).toFixed(1)}/s; ${alerts}`
  );
}

/** A refresh where no endpoint answered: what was tried, and for how long there has been no data. */
export function renderNoAnswer(nowMs: number, lastOkAtMs: number | undefined, reason: string): string {
  const since =
    lastOkAtMs === undefined
      ? 'no data yet'
      : `no data for ${((nowMs - lastOkAtMs) / 1000).toFixed(1)} s (last at ${new Date(lastOkAtMs).toISOString().slice(11, 19)})`;
  return `${new Date(nowMs).toISOString().slice(11, 19)} ${since}: ${reason}; trying again`;
}
