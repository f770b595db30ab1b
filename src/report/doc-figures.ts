/**
 * What `rmq-bench report` says of one --json document, by its kind: its key figures, why it
 * failed (from its own problems, reasons or claims), its verdict. Pure; never throws on a
 * document of an unexpected shape (the figures say "?"). The report asks them only of a document
 * whose fields match its kind's (doc-shape.ts).
 */
export type J = Record<string, unknown>;

export const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);
const objs = (v: unknown): J[] => (Array.isArray(v) ? v.filter(isObj) : []);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string' && s !== '') : []);
export const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** A figure as the terminal reports print it (12,345), or '?' when the field is missing. */
const n = (v: unknown): string => (isNum(v) ? (Number.isInteger(v) ? v : Math.round(v * 10) / 10).toLocaleString('en-US') : '?');
const s = (v: unknown): string => (typeof v === 'string' ? v : isNum(v) ? String(v) : '?');
const sum = (list: readonly J[], field: string): number => list.reduce((a, x) => a + (isNum(x[field]) ? x[field] : 0), 0);
const ms = (v: unknown): string => (isNum(v) ? `${n(Math.round(v))} ms` : '?');
const held = (checks: readonly J[]): string => `${checks.filter((c) => c.held === true).length}/${checks.length}`;

/** `list` grouped by `field`, the groups in first-seen order. */
function groupBy(list: readonly J[], field: string): Map<string, J[]> {
  const out = new Map<string, J[]>();
  for (const x of list) {
    const key = s(x[field]);
    out.set(key, [...(out.get(key) ?? []), x]);
  }
  return out;
}

const GENERIC_FIELDS = 8;

/** The fallback: the document's top-level numeric fields (schemaVersion aside), at most 8. Pure. */
export function genericFigures(doc: Readonly<J>): string {
  const figures = Object.entries(doc)
    .filter(([k, v]) => k !== 'schemaVersion' && isNum(v))
    .map(([k, v]) => `${k} ${n(v)}`);
  if (figures.length === 0) return '-';
  return figures.length > GENERIC_FIELDS ? `${figures.slice(0, GENERIC_FIELDS).join(', ')}, …` : figures.join(', ');
}

/** The figures one kind is about, in one line. */
function figuresOf(kind: string, d: J): string {
  switch (kind) {
    case 'compare': {
      const t = objs(d.totals).map((m) => `${s(m.mode)}: lost ${n(m.lost)}, silently lost ${n(m.silentlyLost)}, duplicated ${n(m.duplicated)}`);
      return `${d.interrupted === true ? 'interrupted; ' : ''}${t.join('; ')}`;
    }
    case 'consumer-crash':
      return [...groupBy(objs(d.runs), 'mode')]
        .map(([mode, runs]) => `${mode}: lost ${n(sum(runs, 'lost'))}, processed twice ${n(sum(runs, 'processedTwice'))}`)
        .join('; ');
    case 'prefetch-demo':
      return objs(d.rows)
        .map((r) => `prefetch ${r.prefetch === 0 ? '0 (unlimited)' : n(r.prefetch)}: ${ms(r.totalMs)}, fast ${n(r.fastProcessed)} / slow ${n(r.slowProcessed)}`)
        .join('; ');
    case 'dlq-demo':
      if (d.mode === 'strategy')
        return objs(d.summaries)
          .map((v) => `${s(v.variant)}: lost ${n(v.lost)} of ${n(v.published)}`)
          .join('; ');
      return objs(d.results)
        .map((r) => `${s(r.reason)}: ${n(objs(r.dead).length)} of ${n(r.expectedInDlq)} dead-lettered`)
        .join('; ');
    case 'retry-demo': {
      if (d.mode === 'ladder') {
        const good = isObj(d.good) ? d.good : {};
        const poison = isObj(d.poison) ? d.poison : {};
        return `good: processed ${n(good.processedTimes)}× after ${n(good.failures)} failure${good.failures === 1 ? '' : 's'}; poison: ${n(poison.attempts)} attempts, ${poison.inDlq === true ? 'in' : 'not in'} the DLQ`;
      }
      return `${n(objs(d.attempts).length)} attempts, TTL ${ms(d.ttlMs)}, processed ${n(d.processedTimes)}×`;
    }
    case 'delayed-retry-demo': {
      const rounds = objs(d.rounds);
      return `${s(d.type)} via ${s(d.via)}: ${rounds.filter((r) => r.ok === true).length}/${rounds.length} rounds as expected, ${n(d.processed)} processed`;
    }
    case 'consumer-timeout-demo':
      return objs(d.runs)
        .map((r) => `${s(r.via)}: cancelled after ${ms(r.measuredTimeoutMs)} (timeout ${ms(r.timeoutMs)}), claims held ${held(objs(r.checks))}`)
        .join('; ');
    case 'alarm-demo': {
      const pubs = objs(d.publishers);
      const consumer = isObj(d.consumer) ? d.consumer : {};
      return `${typeof d.alarm === 'string' ? `${d.alarm} alarm: ` : ''}claims held ${held(objs(d.checks))}; confirmed and never delivered ${n(sum(pubs, 'confirmedMissing'))}; sent and never delivered ${n(sum(pubs, 'missing'))}; backlog read during the alarm ${n(consumer.backlogDuringAlarm)}`;
    }
    case 'durability-demo':
      return `${s(d.how)}: ${objs(d.rows)
        .map((r) => `${s(r.queueType)} ${s(r.deliveryMode)} ${n(r.survived)} of ${n(r.confirmed)} survived`)
        .join(', ')}`;
    case 'bench':
      return objs(d.runs)
        .map((r) => `${s(r.label)}: ${n(isNum(r.publishRatePerSec) ? Math.round(r.publishRatePerSec) : r.publishRatePerSec)} msg/s`)
        .join(', ');
    case 'chaos': {
      const t = isObj(d.totals) ? d.totals : {};
      return `${n(objs(d.faults).length)} faults; lost ${n(t.lost)}, silently lost ${n(t.silentlyLost)}, duplicated ${n(t.duplicated)}, unexpected ${n(d.unexpected)}`;
    }
    case 'audit': {
      const c = isObj(d.counts) ? d.counts : {};
      return `pass ${n(c.pass)}, warn ${n(c.warn)}, fail ${n(c.fail)}`;
    }
    case 'producer-crash':
      return objs(d.totals)
        .map((t) => `${s(t.mode)}: lost ${n(t.lost)}, duplicated ${n(t.duplicated)}`)
        .join('; ');
    case 'producer':
      return `written ${n(d.written)}, confirmed ${n(d.confirmed)}, nacked ${n(d.nacked)}, indeterminate ${n(d.indeterminate)}`;
    case 'consumer':
      return `received ${n(d.received)}, processed ${n(d.processed)}, duplicates skipped ${n(d.duplicatesSkipped)}`;
    case 'verify': {
      const r = isObj(d.reconciliation) ? d.reconciliation : {};
      return `lost ${n(r.lost)}, silently lost ${n(r.silentlyLost)}, duplicated ${n(r.duplicated)}`;
    }
    case 'failover':
      return `${s(d.fault)} ${s(d.oldLeader)}: new leader ${d.newLeader === null ? 'none' : s(d.newLeader)} after ${ms(d.electionMs)}`;
    case 'dlq-inspect':
      return `${n(d.total)} messages in ${s(d.queue)}`;
    case 'dlq-replay':
      return `replayed ${n(d.replayed)}, skipped ${n(d.skipped)}, left in the queue ${n(d.leftInQueue)}`;
    case 'report': {
      const docs = objs(d.documents);
      const failed = docs.filter((x) => x.status !== 'ok' && x.status !== 'no-verdict').length;
      return `${n(docs.length)} documents, ${n(failed)} failed or not read`;
    }
    default:
      return '';
  }
}

/**
 * keyFigures, except that what a kind's figures throw is thrown: `rmq-bench report` lists such a
 * document as malformed rather than show the fallback as if nothing were wrong. Pure.
 */
export function keyFiguresOrThrow(kind: string, doc: Readonly<Record<string, unknown>>): string {
  const f = figuresOf(kind, doc as J);
  // No figure at all (its kind's fields missing, or a kind without a case): the fallback.
  return /\d/.test(f) ? f : genericFigures(doc);
}

/**
 * The figures a document of this kind is about, in one line (compare: lost, silently lost and
 * duplicated per mode; alarm-demo: claims held and what never arrived...); any other kind, or a
 * document without the fields its kind has: its top-level numeric fields. Pure; never throws.
 */
export function keyFigures(kind: string, doc: Readonly<Record<string, unknown>>): string {
  try {
    return keyFiguresOrThrow(kind, doc);
  } catch {
    return genericFigures(doc);
  }
}

/**
 * Why a document failed, in its own words: `problems` and `reasons` (top level, and each run's or
 * result's, labelled), the claims not held, a failed audit's items, compare's and verify's
 * reconciliation verdicts. Empty when the document says nothing. Pure.
 */
export function failureReasons(kind: string, doc: Readonly<Record<string, unknown>>): string[] {
  const d = doc as J;
  const out: string[] = [...strings(d.problems), ...strings(d.reasons)];
  const notHeld = (checks: unknown, label = ''): string[] =>
    objs(checks)
      .filter((c) => c.held === false)
      .map((c) => `${label}claim not held: ${s(c.claim)}${typeof c.measured === 'string' ? ` (measured: ${c.measured})` : ''}`);
  out.push(...notHeld(d.checks));
  for (const x of [...objs(d.runs), ...objs(d.results)]) {
    const label =
      typeof x.via === 'string' ? x.via : typeof x.reason === 'string' ? x.reason : typeof x.mode === 'string' ? `${x.mode} run ${s(x.run)}` : 'run';
    out.push(...strings(x.problems).map((p) => `${label}: ${p}`));
    out.push(...notHeld(x.checks, `${label}: `));
  }
  if (kind === 'compare') {
    if (d.interrupted === true) out.push('interrupted (Ctrl+C): the runs until then');
    for (const r of objs(d.runs)) {
      const rec = isObj(r.reconciliation) ? r.reconciliation : {};
      const verdict = isObj(rec.verdict) ? rec.verdict : {};
      if (verdict.ok === false && (r.mode === 'confirms-on' || strings(verdict.reasons).some((x) => x.includes('unexpected'))))
        out.push(`${s(r.mode)} run ${s(r.run)}: ${strings(verdict.reasons).join('; ')}`);
    }
  }
  if (kind === 'verify') {
    const rec = isObj(d.reconciliation) ? d.reconciliation : {};
    out.push(...strings(isObj(rec.verdict) ? rec.verdict.reasons : undefined));
  }
  if (kind === 'audit')
    out.push(
      ...objs(d.items)
        .filter((i) => i.status === 'fail')
        .map((i) => `${s(i.object)}: ${s(i.message)}`),
    );
  return [...new Set(out)];
}

/** The verdict a document carries: its `ok` (verify: its reconciliation's); null when it has none. */
export function verdictOf(kind: string, d: J): boolean | null {
  if (typeof d.ok === 'boolean') return d.ok;
  if (kind === 'verify' && isObj(d.reconciliation) && isObj(d.reconciliation.verdict) && typeof d.reconciliation.verdict.ok === 'boolean')
    return d.reconciliation.verdict.ok;
  return null;
}
