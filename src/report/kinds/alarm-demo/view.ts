import type { AlarmDemoResult, AlarmSample, AlarmTimeline, ConsumerRun, PublisherRun } from '../../../scenarios/demos/alarm-plan.js';
import { type J, held, isObj, n, objs, sum } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { list, num, obj, opt, record, str } from '../../shape-check.js';
import { claims, nullNum } from '../shared.js';
import { renderAlarmDemo } from './text.js';
import { alarmCharts } from './charts.js';

/** `rmq-bench alarm-demo`: a memory or disk alarm raised under publishers on either side of it. */
export const alarmDemo: KindView<AlarmDemoResult> = {
  shape: obj<AlarmDemoResult>({
    alarm: str,
    node: str,
    timeline: obj<AlarmTimeline>({ raiseAtMs: num, clearAtMs: nullNum }),
    publishers: list(
      'publishers',
      obj<PublisherRun>({
        role: str,
        node: str,
        sent: num,
        confirmed: opt(nullNum),
        indeterminate: opt(nullNum),
        arrived: num,
        missing: num,
        confirmedMissing: opt(num),
        blockedAtMs: nullNum,
        unblockedAtMs: nullNum,
        gaveUpAtMs: nullNum,
      }),
    ),
    samples: list('samples', obj<AlarmSample>({ tMs: num, sent: record('numbers', num), delivered: num })),
    consumer: opt(obj<ConsumerRun>({ backlogDuringAlarm: opt(num) })),
    checks: claims,
  }),
  text: renderAlarmDemo,
  charts: alarmCharts,
  figures: (d) => {
    const pubs = objs(d.publishers);
    const consumer: J = isObj(d.consumer) ? d.consumer : {};
    return `${typeof d.alarm === 'string' ? `${d.alarm} alarm: ` : ''}claims held ${held(objs(d.checks))}; confirmed and never delivered ${n(sum(pubs, 'confirmedMissing'))}; sent and never delivered ${n(sum(pubs, 'missing'))}; backlog read during the alarm ${n(consumer.backlogDuringAlarm)}`;
  },
  reasons: none,
};
