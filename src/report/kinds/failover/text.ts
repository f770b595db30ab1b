import { FAULT_ABOUT } from '../../../faults/kinds.js';
import { FAULTS } from '../../../faults/registry.js';
import type { FailoverResult } from '../../../scenarios/under-faults/failover.js';
import { formatMs } from '../../../util/duration.js';
import { renderFields } from '../../table.js';

/** failover result → text. Pure. */

export function renderFailover(r: FailoverResult): string {
  const rows: [string, string][] = [
    ['queue', r.queueType === undefined || r.queueType === 'quorum' ? r.queue : `${r.queue} (a ${r.queueType} queue)`],
    ['fault', `${r.fault}: ${FAULT_ABOUT[r.fault]?.description ?? 'a fault this version does not know'}; the call took ${formatMs(r.faultCallMs)}`],
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
  if (r.newLeader === null || r.electionMs === null) rows.push(['new leader', noNewLeader(r)]);
  else {
    rows.push(['new leader', r.newLeader]);
    rows.push([
      'election',
      `${formatMs(r.electionMs)} (fault issued → new leader seen ${r.detectedBy === 'cli' ? "by quorum_status asked in a survivor's container (every 250 ms)" : "by the survivors' management API (polled every 100 ms)"})`,
    ]);
  }
  if (r.restored) {
    // A slow, delayed or partly cut node is not down: the fault was on for that long.
    rows.push([FAULTS[r.fault]?.nodeDown ? 'node down for' : 'fault held for', formatMs(r.downMs ?? NaN)]);
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
  return renderFields(rows);
}

/** Why no new leader was seen while the fault was on, in the words of the fault's leader effect (its spec). */
function noNewLeader(r: FailoverResult): string {
  // A document read by `rmq-bench report` may name a fault this version does not know.
  switch (FAULTS[r.fault]?.leader) {
    case 'no-majority':
      return `none possible while ${listed([r.oldLeader, ...r.alsoFaulted])} are down (no majority)`;
    case 'moves-in-turn':
      return 'none awaited: every node was restarted in turn, the leader moving as it went';
    default:
      return `none awaited: '${r.fault}' leaves ${r.oldLeader} in the cluster`;
  }
}

/** a and b; a, b and c. */
function listed(names: readonly string[]): string {
  return names.length <= 2 ? names.join(' and ') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}
