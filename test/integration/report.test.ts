/// <reference lib="dom" />
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inChromium, useChromium } from './browser.js';
import { parseJson, runCli } from './cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
useChromium();

interface Summary {
  ok: boolean;
  output: string;
  documents: { file: string; anchor: string; kind: string | null; status: string; problem: string | null; keyFigures: string; reasons: string[] }[];
}

/** The page as Chromium shows it at 1280 px: its sections, its rows, where the summary's links lead, whether it scrolls sideways. */
async function openCombined(file: string, screenshotName: string) {
  return inChromium(file, screenshotName, async ({ page, consoleErrors, failedRequests: requests }) => {
    const info = await page.evaluate(() => ({
      sections: Array.from(document.querySelectorAll('section.doc')).map((s) => ({
        id: s.id,
        status: s.getAttribute('data-status'),
        charts: s.querySelectorAll('svg.chart').length,
      })),
      rows: Array.from(document.querySelectorAll('table.summary tbody tr')).map((tr) =>
        Array.from(tr.querySelectorAll('td')).map((td) => td.textContent ?? ''),
      ),
      // Every link of the summary leads to a section of the page.
      deadLinks: Array.from(document.querySelectorAll('table.summary a')).filter((a) => !document.getElementById((a.getAttribute('href') ?? '').slice(1)))
        .length,
      jsonViews: Array.from(document.querySelectorAll('pre.json-view')).filter((p) => (p.textContent ?? '').startsWith('{\n')).length,
      horizontalScroll: document.documentElement.scrollWidth > document.documentElement.clientWidth,
      scrollWidth: document.documentElement.scrollWidth,
    }));
    return { ...info, consoleErrors, requests };
  });
}

describe('rmq-bench report: one page for demos run on the cluster, opened in headless Chromium', { timeout: 180_000 }, () => {
  it('a row and a section per input: OK, no verdict, FAILED and malformed; nothing fetched; no sideways scroll at 1280 px', async () => {
    const results = path.join(dir, 'results');
    mkdirSync(results);
    const demos: [name: string, args: string[], exitCode: number][] = [
      ['1-prefetch-demo', ['prefetch-demo', '-n', '100', '--prefetch', '1,0'], 0],
      ['2-dlq-demo', ['dlq-demo', '--reason', 'rejected,expired', '--ttl', '300ms', '--auto'], 0],
      // A failed verdict, for real: no tolerance over the ladder's TTLs.
      ['3-retry-ladder', ['retry-demo', '--backoff', '300ms,300ms', '--failures', '1', '--tolerance', '0ms', '--auto'], 1],
    ];
    const docs: Record<string, string> = {};
    for (const [name, args, exitCode] of demos) {
      const r = await runCli([...args, '--json']);
      expect(r.exitCode, `${name}: ${r.stderr}`).toBe(exitCode);
      writeFileSync(path.join(results, `${name}.json`), r.stdout);
      docs[name] = r.stdout;
    }
    // What a step killed half-way leaves behind.
    writeFileSync(path.join(results, '4-truncated.json'), docs['1-prefetch-demo']!.slice(0, 200));

    const out = path.join(dir, 'index.html');
    const r = await runCli(['report', results, '--html', out, '--json']);
    // A malformed input is a data error (65), the page written all the same; the failed verdict is named beside it.
    expect(r.exitCode, r.stderr).toBe(65);
    const summary = parseJson<Summary>(r);
    expect(summary.ok).toBe(false);
    expect(summary.documents.map((d) => [d.kind, d.status])).toEqual([
      ['prefetch-demo', 'no-verdict'],
      ['dlq-demo', 'ok'],
      ['retry-demo', 'failed'],
      [null, 'malformed'],
    ]);
    expect(summary.documents[1]!.keyFigures).toBe('rejected: 3 of 3 dead-lettered; expired: 3 of 3 dead-lettered');
    expect(summary.documents[2]!.reasons.length).toBeGreaterThan(0);
    expect(summary.documents[3]!.problem).toMatch(/^not JSON \(/);
    // stderr: a line per document, then the page.
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[4]).toBe(`report: ${out} (4 documents: 1 OK, 1 FAILED, 1 no verdict, 1 malformed)`);
    expect(lines[5]).toBe(`rmq-bench: 1 of 4 documents could not be read (${path.join(results, '4-truncated.json')}), and 1 FAILED; the page has the rest`);

    const page = await openCombined(out, 'combined-report.png');
    expect(page.consoleErrors).toEqual([]);
    expect(page.requests).toEqual([]);
    expect(page.sections.map((s) => [s.id, s.status])).toEqual(summary.documents.map((d) => [d.anchor, d.status]));
    // prefetch-demo and dlq-demo: one bar chart each; the ladder: its timeline; the truncated file: none.
    expect(page.sections.map((s) => s.charts)).toEqual([1, 1, 1, 0]);
    expect(page.rows).toHaveLength(4);
    expect(page.rows[3]![2]).toMatch(/^malformed: not JSON/);
    expect(page.deadLinks).toBe(0);
    expect(page.jsonViews).toBe(3);
    expect(page.horizontalScroll, `scrollWidth ${page.scrollWidth}`).toBe(false);
    expect(statSync(page.screenshot).size).toBeGreaterThan(10_000);
  });

  it('an input path that does not exist: exit 66, and no page written', async () => {
    const out = path.join(dir, 'none.html');
    const r = await runCli(['report', path.join(dir, 'nope'), '--html', out]);
    expect(r.exitCode).toBe(66);
    expect(r.stderr.trim()).toBe(`rmq-bench: no such file or folder: ${path.join(dir, 'nope')}`);
    expect(() => statSync(out)).toThrow();
  });
});
