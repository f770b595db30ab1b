import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openReport } from './browser.js';
import { parseJson, runCli } from './cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-html-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('--html: a self-contained report, opened in headless Chromium', { timeout: 240_000 }, () => {
  it('compare: a timeline per mode with the fault, the election and the restore marked; the embedded JSON is the --json document', async () => {
    const file = path.join(dir, 'compare.html');
    const r = await runCli(['compare', '-n', '3000', '--html', file, '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(`HTML report: ${file}`);
    const page = await openReport(file, 'compare-report.png');
    expect(page.consoleErrors).toEqual([]);
    expect(page.horizontalScroll, 'the page scrolls sideways at 1280 px').toBe(false);
    expect(page.markersOutside).toEqual([]);
    expect(page.failedRequests).toEqual([]);
    expect(page.kind).toBe('compare');
    expect(page.charts).toBe(2);
    expect(page.ready).toBe('2');
    // confirms on: publish rate, confirm rate, in flight; confirms off: publish rate, in flight.
    expect(page.counts.polylines).toBe(5);
    expect(page.counts.markers.filter((m) => m.startsWith('kill '))).toHaveLength(2);
    expect(page.counts.markers.filter((m) => m.startsWith('new leader'))).toHaveLength(2);
    expect(page.counts.markers.filter((m) => m === 'restored')).toHaveLength(2);
    // The rejoin comes seconds after the producer finished: the axis reaches it, every marker is inside the plot.
    expect(page.counts.markers.filter((m) => m === 'rejoined')).toHaveLength(2);
    expect(page.markersOutside).toEqual([]);
    expect(page.horizontalScroll).toBe(false);
    expect(page.doc).toEqual(parseJson(r));
    expect(statSync(page.screenshot).size).toBeGreaterThan(10_000);
  });

  it('delayed-retry-demo: each delivery on a timeline, and measured against expected delays', async () => {
    const file = path.join(dir, 'delayed.html');
    const r = await runCli([
      'delayed-retry-demo',
      '--type',
      'failed',
      '--min',
      '300ms',
      '--max',
      '600ms',
      '-n',
      '2',
      '--returns',
      '2',
      '--auto',
      '--html',
      file,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const page = await openReport(file, 'delayed-retry-report.png');
    expect(page.consoleErrors).toEqual([]);
    expect(page.horizontalScroll, 'the page scrolls sideways at 1280 px').toBe(false);
    expect(page.markersOutside).toEqual([]);
    expect(page.failedRequests).toEqual([]);
    expect(page.charts).toBe(2);
    // 2 messages × (first delivery + 3 returns: reject, close, then a nack back at once).
    expect(page.counts.dots).toBe(8);
    // expected and measured per return.
    expect(page.counts.bars).toBe(6);
    expect((page.doc as { ok: boolean }).ok).toBe(true);
  });

  it('retry-demo --backoff: the ladder on a timeline; a failed verdict shows as FAILED in the page', async () => {
    const file = path.join(dir, 'ladder.html');
    const r = await runCli(['retry-demo', '--backoff', '300ms,300ms', '--failures', '1', '--tolerance', '0ms', '--auto', '--html', file]);
    expect(r.exitCode).toBe(1);
    const page = await openReport(file, 'retry-ladder-report.png');
    expect(page.consoleErrors).toEqual([]);
    expect(page.horizontalScroll, 'the page scrolls sideways at 1280 px').toBe(false);
    expect(page.markersOutside).toEqual([]);
    expect(page.charts).toBe(1);
    // good: 2 attempts; poison: 3.
    expect(page.counts.dots).toBe(5);
    expect((page.doc as { ok: boolean }).ok).toBe(false);
  });

  it('bench: throughput and latency percentiles per mode as bars', async () => {
    const file = path.join(dir, 'bench.html');
    const r = await runCli(['bench', '--mode', 'sync,async', '-C', '300', '--html', file]);
    expect(r.exitCode, r.stderr).toBe(0);
    const page = await openReport(file, 'bench-report.png');
    expect(page.consoleErrors).toEqual([]);
    expect(page.horizontalScroll, 'the page scrolls sideways at 1280 px').toBe(false);
    expect(page.markersOutside).toEqual([]);
    expect(page.failedRequests).toEqual([]);
    expect(page.charts).toBe(3);
    // 2 modes × (2 rates + 4 confirm percentiles + 4 end-to-end percentiles).
    expect(page.counts.bars).toBe(20);
  });

  it('an --html path that cannot be written is refused before anything runs', async () => {
    const r = await runCli(['compare', '--html', path.join(dir, 'missing', 'r.html')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('does not exist or is not writable');
    expect(existsSync(path.join(dir, 'missing'))).toBe(false);
  });
});
