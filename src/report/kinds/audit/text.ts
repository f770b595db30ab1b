import { CHECK_IDS, type AuditItem } from '../../../audit/check.js';
import type { AuditResult } from '../../../scenarios/broker-tools/audit.js';
import { renderTable } from '../../table.js';
import { fitLines, wrap } from '../../text-wrap.js';

/** audit result → text. Pure. */

/** The audit's messages: a narrower column, indented under their check. */
const WIDTH = 100;
const INDENT = '      ';
const para = (text: string): string => wrap(text, WIDTH, INDENT);

/** Warnings and failures with the same check and fix, in one block: the message once when it is the same. */
function problemBlock(group: readonly AuditItem[]): string {
  const first = group[0]!;
  const label = `${first.status.toUpperCase().padEnd(4)}  ${first.id.padEnd(16)}  `;
  const lines: string[] = [];
  if (group.length === 1) {
    lines.push(`${label}${first.object}`, para(first.message));
  } else {
    const kinds = new Set(group.map((i) => i.object.split(' ')[0]));
    const kind = kinds.size === 1 ? `${[...kinds][0]}${[...kinds][0]!.endsWith('s') ? '' : 's'}` : 'objects';
    lines.push(`${label}${group.length} ${kind}`);
    if (group.every((i) => i.message === first.message)) {
      lines.push(para(group.map((i) => i.object.replace(/^\S+ /, '')).join(', ')), para(first.message));
    } else {
      for (const i of group) lines.push(para(`${i.object}: ${i.message}`));
    }
  }
  if (first.fix) lines.push(para(`fix: ${first.fix}`));
  return lines.join('\n');
}

function groupProblems(items: readonly AuditItem[]): AuditItem[][] {
  const groups = new Map<string, AuditItem[]>();
  for (const i of items) {
    const k = `${i.status}\u0000${i.id}\u0000${i.fix ?? ''}`;
    groups.set(k, [...(groups.get(k) ?? []), i]);
  }
  return [...groups.values()];
}

function objectsOf(items: readonly AuditItem[], max = 3): string {
  const names = items.map((i) => i.object);
  return names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

export function renderAudit(r: AuditResult, options: { all?: boolean } = {}): string {
  const out: string[] = [];
  const o = r.objects;
  const n = (k: number, one: string, many = `${one}s`): string => `${k} ${k === 1 ? one : many}`;
  out.push(`audit of ${r.cluster.name ?? 'the cluster'} (RabbitMQ ${r.cluster.version ?? '?'}), read from ${r.answeredBy.node} (${r.answeredBy.url})`);
  out.push(
    `  ${n(o.nodes, 'node')}, ${n(o.queues, 'queue')}, ${n(o.exchanges, 'exchange')}, ${n(o.bindings, 'binding')}, ${n(o.policies, 'policy', 'policies')}`,
  );
  for (const u of r.unanswered) out.push(`  ${u.node} (${u.url}) did not answer (${u.error}); asked the next one`);

  const problems = r.items.filter((i) => i.status !== 'pass');
  if (problems.length > 0) out.push('', groupProblems(problems).map(problemBlock).join('\n\n'));

  const passed = r.items.filter((i) => i.status === 'pass');
  if (options.all) {
    if (passed.length > 0) out.push('', passed.map((i) => `PASS  ${i.id.padEnd(16)}  ${i.object}: ${i.message}`).join('\n'));
  } else if (passed.length > 0) {
    const rows = CHECK_IDS.map((id) => passed.filter((i) => i.id === id))
      .filter((g) => g.length > 0)
      .map((g) => [g[0]!.id, g.length, objectsOf(g)]);
    out.push('', 'passed (--all lists each one):', renderTable(['check', 'items', 'objects'], rows));
  }

  if (r.versionItems && r.versionItems.length > 0) {
    out.push('', `checked by the rules of RabbitMQ ${r.cluster.version ?? '(version unknown: the newest rules)'}:`);
    for (const v of r.versionItems) out.push(`  ${v.check}:`, wrap(v.says, WIDTH, '    '));
  }

  const c = r.counts;
  out.push('', `verdict: ${r.ok ? (c.warn > 0 ? 'PASS with warnings' : 'PASS') : 'FAIL'} (${c.fail} fail, ${c.warn} warn, ${c.pass} pass)`);
  return fitLines(out);
}
