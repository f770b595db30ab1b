import { FAULT_DESCRIPTIONS } from '../../../faults/injector.js';
import type { FailoverResult } from '../../../scenarios/failover.js';
import { formatMs } from '../../../util/duration.js';

/** failover result → text. Pure. */

export function renderFailover(r: FailoverResult): string {
  const rows: [string, string][] = [
    ['queue', r.queueType === undefined || r.queueType === 'quorum' ? r.queue : `${r.queue} (a ${r.queueType} queue)`],
    ['fault', `${r.fault}: ${FAULT_DESCRIPTIONS[r.fault]}; the call took ${formatMs(r.faultCallMs)}`],
    ['old leader', r.alsoFaulted.length > 0 ? `${r.oldLeader} (with ${r.alsoFaulted.join(', ')}: no majority left)` : r.oldLeader],
  ];
  if (r.shape) rows.push(['links cut', r.shape]);
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
        : r.fault === 'rolling-restart'
          ? 'none awaited: every node was restarted in turn, the leader moving as it went'
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
    // A slow, delayed or partly cut node is not down: the fault was on for that long.
    const down = (['kill', 'stop', 'pause', 'disconnect', 'partition', 'partition-halves', 'quorum-loss'] as FailoverResult['fault'][]).includes(r.fault);
    rows.push([down ? 'node down for' : 'fault held for', formatMs(r.downMs ?? NaN)]);
    // Shown where it takes seconds: a start after kill or stop, a partition's mend before 4.3.
    if ((r.restoreMs ?? 0) >= 1_000) rows.push(['restore', `${formatMs(r.restoreMs ?? NaN)} (undoing the fault; before 4.3 a partition's mend too)`]);
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
