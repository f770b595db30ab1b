import type { ResetResult } from '../cluster/reset.js';
import type { StatusResult } from '../cluster/status.js';
import type { UpResult } from '../cluster/up.js';
import { FAULT_DESCRIPTIONS } from '../cluster/faults.js';
import { shortNodeName } from '../cluster/leader.js';
import type { FailoverResult } from '../scenarios/failover.js';
import { formatMs } from '../util/duration.js';
import { renderTable } from './table.js';

/** Printers: result → text. Pure; the command decides where it goes. */

export function renderUp(r: UpResult): string {
  const head = r.alreadyUp
    ? `cluster already up (RabbitMQ ${r.version ?? '?'}), checked in ${formatMs(r.elapsedMs)}`
    : `cluster up (RabbitMQ ${r.version ?? '?'}) in ${formatMs(r.elapsedMs)}` +
      (r.image ? `; image ${r.image.image} ${r.image.how}${r.image.how === 'present' ? '' : ` in ${formatMs(r.image.elapsedMs)}`}` : '');
  const table = renderTable(
    ['node', 'amqp', 'management'],
    r.nodes.map((n) => [n.name, n.amqpUrl, n.managementUrl]),
  );
  return `${head}\n${table}\nprometheus: ${r.prometheusUrl}`;
}

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
export function renderClusterLine(s: Pick<StatusResult, 'cluster' | 'prometheusPort' | 'nodes'>): string {
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
  if (!s.reachable) return `${head}\n${nodes}\n\nno management endpoint answered: queue leaders unknown`;
  const queues =
    s.queues.length === 0
      ? 'no quorum queues'
      : renderTable(
          ['quorum queue', 'leader', 'members', 'online', 'messages'],
          s.queues.map((q) => [q.name, q.leader ? shortNodeName(q.leader) : 'none', members(q.members), members(q.online), q.messages ?? '-']),
        );
  return `${head}\n${nodes}\n\n${queues}`;
}

export function renderFailover(r: FailoverResult): string {
  const rows: [string, string][] = [
    ['queue', r.queue],
    ['fault', `${r.fault}: ${FAULT_DESCRIPTIONS[r.fault]}; the call took ${formatMs(r.faultCallMs)}`],
    ['old leader', r.alsoFaulted.length > 0 ? `${r.oldLeader} (with ${r.alsoFaulted.join(', ')}: no majority left)` : r.oldLeader],
  ];
  if (r.netem) {
    const n = r.netem;
    rows.push([
      'netem',
      `delay ${formatMs(n.delayMs)}${n.jitterMs > 0 ? ` ± ${formatMs(n.jitterMs)}` : ''}, loss ${n.lossPct}% on everything ${r.oldLeader} sends`,
    ]);
  }
  if (r.newLeader === null || r.electionMs === null)
    rows.push([
      'new leader',
      r.fault === 'quorum-loss'
        ? `none possible while ${[r.oldLeader, ...r.alsoFaulted].join(' and ')} are down (no majority)`
        : `none awaited: '${r.fault}' leaves ${r.oldLeader} in the cluster`,
    ]);
  else {
    rows.push(['new leader', r.newLeader]);
    rows.push([
      'election',
      `${formatMs(r.electionMs)} (fault issued → new leader seen ${r.detectedBy === 'cli' ? "by quorum_status asked in a survivor's container (every 250 ms)" : "by the survivors' management API (polled every 100 ms)"})`,
    ]);
  }
  if (r.restored) {
    rows.push(['node down for', formatMs(r.downMs ?? NaN)]);
    rows.push([
      'rejoin',
      `${formatMs(r.rejoinMs ?? NaN)} (restore → ${r.oldLeader} running in the cluster with ${r.onlineAfter?.length ?? 0} of ${r.membersAfter?.length ?? 0} members online, then stable for 3 s)`,
    ]);
    if (r.newLeader === null && r.leaderAfter !== null) rows.push(['leader after', `${r.leaderAfter} (once every member was back)`]);
  } else {
    rows.push(['restore', `not restored (--no-restore): ${r.oldLeader} is still under '${r.fault}'`]);
  }
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
}

export function renderReset(r: ResetResult): string {
  const purged = r.purgedQueues.map((q) => `${q.name} (${q.messages})`).join(', ') || 'none';
  return [
    `reset in ${formatMs(r.elapsedMs)}`,
    `deleted queues:    ${r.deletedQueues.join(', ') || 'none'}`,
    `purged queues:     ${purged}`,
    `deleted exchanges: ${r.deletedExchanges.join(', ') || 'none'}`,
    `deleted policies:  ${r.deletedPolicies.join(', ') || 'none'}`,
  ].join('\n');
}
