import type { FailoverResult } from '../../../scenarios/under-faults/failover.js';
import { ms, s } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { obj, opt, str } from '../../shape-check.js';
import { nullNum, nullStr } from '../shared.js';
import { renderFailover } from './text.js';

/** `rmq-bench failover`: a queue's leader faulted, the election timed. */
export const failover: KindView<FailoverResult> = {
  shape: obj<FailoverResult>({ fault: opt(str), oldLeader: opt(str), newLeader: opt(nullStr), electionMs: opt(nullNum) }),
  text: renderFailover,
  charts: none,
  figures: (d) => `${s(d.fault)} ${s(d.oldLeader)}: new leader ${d.newLeader === null ? 'none' : s(d.newLeader)} after ${ms(d.electionMs)}`,
  reasons: none,
};
