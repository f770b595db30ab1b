import type { ProducerCrashMode } from '../../../scenarios/crashes/producer-crash-modes.js';
import type { ProducerCrashResult, ProducerCrashRun } from '../../../scenarios/crashes/producer-crash-result.js';
import { orderLines } from '../../order-text.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

/** producer-crash result → text. Pure. */

const LABEL: Record<ProducerCrashMode, string> = { naive: 'naive (in memory)', outbox: 'outbox' };

function killsText(r: ProducerCrashRun): string {
  if (r.kills.length === 0) return '-';
  return r.kills.map((k) => (k.restartFrom === null ? String(k.atPosition) : `${k.atPosition}→${k.restartFrom}`)).join(' ');
}

export function renderProducerCrash(c: ProducerCrashResult): string {
  const o = c.options;
  const modes = o.modes;
  const t = (m: ProducerCrashMode): ProducerCrashResult['totals'][number] => c.totals.find((x) => x.mode === m)!;
  const head =
    `producer-crash: ${o.count} events per run, ${o.kills} SIGKILLs of the producer at random points (seed ${o.seed}), ${o.runs} ${o.runs === 1 ? 'run' : 'runs'}` +
    `${o.fault === 'none' ? '' : `, and a '${o.fault}' of the queue leader during each`}; ${o.ratePerSec === 0 ? 'as fast as possible' : `${o.ratePerSec} events/s`}`;
  const summary = renderTable(
    ['', ...modes.map((m) => LABEL[m])],
    [
      ['events intended', ...modes.map((m) => t(m).intended)],
      ['SIGKILLs', ...modes.map((m) => t(m).kills)],
      ['read (distinct)', ...modes.map((m) => t(m).read)],
      ['lost', ...modes.map((m) => t(m).lost)],
      ['duplicated', ...modes.map((m) => t(m).duplicated)],
      ['extra deliveries', ...modes.map((m) => t(m).extraDeliveries)],
      ['removed by an idempotent consumer', ...modes.map((m) => t(m).duplicatesRemoved)],
      ['processed once each', ...modes.map((m) => t(m).processed)],
      ['runs', ...modes.map((m) => t(m).runs)],
      ['runs with loss', ...modes.map((m) => t(m).runsWithLoss)],
    ],
  );
  const parts = [head, '', summary];
  if (o.runs > 1 || o.fault !== 'none') {
    parts.push(
      '',
      renderTable(
        ['run', 'mode', 'kills at (naive: →restart)', ...(o.fault === 'none' ? [] : ['fault']), 'read', 'lost', 'dup'],
        c.runs.map((r) => [
          String(r.run),
          r.mode,
          killsText(r),
          ...(o.fault === 'none'
            ? []
            : [r.fault ? (r.fault.error ? `failed: ${r.fault.error}` : `${r.fault.node ?? '?'}→${r.fault.newLeader ?? '?'} at ${r.fault.atPosition}`) : '-']),
          r.read,
          r.lost,
          r.duplicated,
        ]),
      ),
    );
  }
  if (c.runs.length > 0) {
    // The application's ledger knows no resends: what a restart sent again is explained only once its first copy was read.
    parts.push('', 'order of the reads (the draining consumer; not part of the verdict):');
    for (const r of c.runs) parts.push(...orderLines(`  ${r.mode} run ${r.run}`, r.reconciliation.order));
  }
  const notes: string[] = [''];
  if (modes.includes('naive')) {
    const n = t('naive');
    notes.push(
      `naive: ${n.lost} lost and ${n.duplicated} duplicated. A restart resumes after the last number the producer logged (every ${o.printEvery}): what was sent after that log line is sent again (duplicates), and what it had logged but the broker never took is gone (loss).`,
    );
  }
  if (modes.includes('outbox')) {
    const b = t('outbox');
    notes.push(
      `outbox: ${b.lost} lost; ${b.duplicated} duplicated (rows the broker had taken but whose confirm was not yet marked when a kill or a lost connection came: published again), all ${b.duplicatesRemoved} extra deliveries removed by the idempotent consumer (${b.processedTwice} processed twice).`,
    );
  }
  notes.push(c.ok ? 'verdict: OK (the outbox lost nothing)' : `verdict: FAILED: ${c.reasons.join('; ')}`);
  return fitLines([...parts, ...notes]);
}
