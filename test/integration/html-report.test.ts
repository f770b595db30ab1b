import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openReport, useChromium } from './browser.js';
import { runCli } from './cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-html-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
useChromium();

// compare's page is checked on the workshop's own run (producer.test.ts), not on a run of its own.
describe('--html: a self-contained report, opened in headless Chromium', { timeout: 240_000 }, () => {
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
    const r = await runCli(['bench', '--confirm-mode', 'sync,async', '-C', '300', '--html', file]);
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
