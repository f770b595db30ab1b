import { KIND_VIEWS, type Kind, type ResultOf, isKind } from './kinds.js';
import type { BrokerInfo } from '../cluster/broker/broker-info.js';
import { toJsonDocument } from './json.js';
import { escapeHtml } from './svg.js';

/**
 * `--html <file>`: one self-contained page (inline styles, inline SVG, no network fetches) with
 * the terminal report, charts, and the same JSON document `--json` prints, embedded in a
 * <script type="application/json" id="rmq-bench-data">. Pure: data in, markup out.
 */

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:980px;padding:0 12px;color:#111827;background:#fff}
h1,h2,.meta,figcaption{overflow-wrap:anywhere}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.meta{color:#4b5563;margin-bottom:16px}
.verdict{display:inline-block;padding:3px 10px;border-radius:4px;font-weight:600;color:#fff}
.verdict.ok{background:#16a34a}.verdict.failed{background:#dc2626}
pre{background:#f3f4f6;padding:12px;overflow-x:auto;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;border-radius:4px}
figure{margin:12px 0 20px}figcaption{font-weight:600;margin-bottom:4px}
svg.chart{max-width:100%;height:auto;background:#fff;overflow:hidden}
.grid{stroke:#e5e7eb}.axis{stroke:#9ca3af}.tick{font-size:11px;fill:#374151}.label{font-size:12px;fill:#111827}
table.counts{border-collapse:collapse;margin:6px 0 12px;display:block;max-width:100%;overflow-x:auto}table.counts td,table.counts th{border:1px solid #d1d5db;padding:3px 8px;text-align:right}
table.counts th{background:#f9fafb}table.counts td:first-child,table.counts th:first-child{text-align:left}
details summary{cursor:pointer;color:#2563eb}
`;

/** The JSON document, safe inside a <script> element. Pure. */
export function embedJson(json: string): string {
  return json
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * The start of every page rmq-bench writes, up to <body>: self-contained (a CSP that allows no
 * request, inline styles), the viewport for a phone, the title. Pure.
 */
export function pageHead(title: string, extraStyle = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>${STYLE}${extraStyle}</style>
</head>`;
}

export function renderHtmlReport<K extends Kind>(
  kind: K,
  data: ResultOf<K>,
  text: string,
  { generatedAtIso = new Date().toISOString(), broker = null }: { generatedAtIso?: string; broker?: BrokerInfo | null } = {},
): string {
  const ok = 'ok' in data ? data.ok : undefined;
  const verdict = typeof ok === 'boolean' ? `<span class="verdict ${ok ? 'ok' : 'failed'}">${ok ? 'verdict: OK' : 'verdict: FAILED'}</span>` : '';
  // A kind from a caller in plain JavaScript may be any string: its page has no charts.
  const sections = isKind(kind) ? chartsFor(kind, data) : [];
  return `${pageHead(`rmq-bench ${kind}`)}
<body data-kind="${escapeHtml(kind)}">
<h1>rmq-bench ${escapeHtml(kind)}</h1>
<div class="meta">generated ${escapeHtml(generatedAtIso)}${broker ? ` · RabbitMQ ${escapeHtml(broker.version)}` : ''} ${verdict}</div>
${sections.join('\n')}
<h2>Report</h2>
<pre id="report">${escapeHtml(text)}</pre>
<details><summary>The JSON document (the same one --json prints)</summary><pre id="json-view"></pre></details>
<script type="application/json" id="rmq-bench-data">${embedJson(toJsonDocument(kind, data, broker))}</script>
<script>
(function () {
  var doc = JSON.parse(document.getElementById('rmq-bench-data').textContent);
  document.getElementById('json-view').textContent = JSON.stringify(doc, null, 2);
  document.body.setAttribute('data-ready', String(document.querySelectorAll('svg.chart').length));
})();
</script>
</body>
</html>
`;
}

/** The charts of a result of this kind (none for a kind without charts). Pure. */
export function chartsFor<K extends Kind>(kind: K, data: ResultOf<K>): string[] {
  return KIND_VIEWS[kind].charts(data);
}
