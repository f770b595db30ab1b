/// <reference lib="dom" />
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { ROOT } from './cli.js';

const DEBIAN_CHROMIUM_BINARY = '/usr/lib/chromium/chromium';

/**
 * Debian's Chromium (scripts/ensure-browser.sh installs it); a missing browser fails the test,
 * never skips it. Debian's /usr/bin/chromium is a shell launcher that sources /etc/chromium.d/
 * and then runs /usr/lib/chromium/chromium. Its dev-shm snippet compares `findmnt`'s free space
 * of /dev/shm with `[`, which prints "[: <bytes>: unexpected operator" on every start where
 * /dev/shm is mounted twice (two lines of output). The binary is launched directly, with flags of
 * our own, so nothing the launcher adds (desktop defaults) changes a test's browser either.
 */
export const CHROMIUM = process.env.RMQ_BENCH_CHROMIUM ?? (existsSync(DEBIAN_CHROMIUM_BINARY) ? DEBIAN_CHROMIUM_BINARY : '/usr/bin/chromium');
export const ARTIFACTS = path.join(ROOT, 'test-artifacts');

export interface OpenedReport {
  kind: string | null;
  charts: number;
  /** What the page's own script counted once it ran (data-ready). */
  ready: string | null;
  counts: { polylines: number; bars: number; dots: number; markers: string[] };
  /** The embedded JSON document, parsed by the page. */
  doc: Record<string, unknown>;
  consoleErrors: string[];
  failedRequests: string[];
  screenshot: string;
  /** At 1280 px wide: the page scrolls sideways (something is wider than the window). */
  horizontalScroll: boolean;
  /** Line-chart markers whose line lies outside their chart's plot area (its x axis), as `label at x`. */
  markersOutside: string[];
}

/** A page as headless Chromium loaded it, with what went wrong on the way. */
export interface LoadedPage {
  page: Page;
  consoleErrors: string[];
  /** Requests that tried to leave the file (a self-contained page makes none). */
  failedRequests: string[];
}

/**
 * One Chromium per test file that opens pages: launched on the file's first page, closed after
 * its last test. A launch costs several times the CPU of a page in a running browser, so a
 * file's pages share one browser, each in a fresh context (no cookies, storage or cache shared
 * between pages). Call useChromium() at the top of a file that calls inChromium or openReport.
 */
let inFile = false;
let browser: Promise<Browser> | undefined;

export function useChromium(): void {
  beforeAll(() => {
    inFile = true;
  });
  afterAll(async () => {
    const open = browser;
    browser = undefined;
    inFile = false;
    await (await open?.catch(() => undefined))?.close();
  });
}

function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // Root in CI needs --no-sandbox; the rest keeps Chromium off a closed network.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    timeout: 60_000,
  });
}

/** The file's browser: launched on first use, and again if it went away (a crash). */
async function fileBrowser(): Promise<Browser> {
  if (!inFile) throw new Error('inChromium outside a file that called useChromium(): nothing would close the browser');
  const open = await browser?.catch(() => undefined);
  if (open?.isConnected()) return open;
  browser = launchChromium();
  return browser;
}

/**
 * Open `file` in headless Chromium at 1280 × 900 and wait for the page's own script (data-ready),
 * run `look` on it, and save a full-page screenshot under test-artifacts/. The page's context is
 * closed on every way out; the browser is the file's (useChromium). A missing Chromium fails the
 * test, never skips it.
 */
export async function inChromium<T>(file: string, screenshotName: string, look: (p: LoadedPage) => Promise<T>): Promise<T & { screenshot: string }> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run scripts/ensure-browser.sh (or set RMQ_BENCH_CHROMIUM)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const context = await (await fileBrowser()).newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    const failedRequests: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(e.message));
    // Self-contained means no request leaves the file: record any that tries.
    page.on('request', (r) => {
      if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) failedRequests.push(r.url());
    });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load', timeout: 30_000 });
    await page.waitForSelector('body[data-ready]', { timeout: 10_000 });
    const result = await look({ page, consoleErrors, failedRequests });
    const screenshot = path.join(ARTIFACTS, screenshotName);
    await page.screenshot({ path: screenshot, fullPage: true });
    return { ...result, screenshot };
  } finally {
    await context.close();
  }
}

export async function openReport(file: string, screenshotName: string): Promise<OpenedReport> {
  return inChromium(file, screenshotName, async ({ page, consoleErrors, failedRequests }) => {
    const info = await page.evaluate(() => ({
      kind: document.body.getAttribute('data-kind'),
      ready: document.body.getAttribute('data-ready'),
      charts: document.querySelectorAll('svg.chart').length,
      polylines: document.querySelectorAll('svg.chart polyline.series').length,
      bars: document.querySelectorAll('svg.chart rect.bar').length,
      dots: document.querySelectorAll('svg.chart circle.dot').length,
      markers: Array.from(document.querySelectorAll('svg.chart g.marker')).map((g) => g.getAttribute('data-marker') ?? ''),
      doc: JSON.parse(document.getElementById('rmq-bench-data')?.textContent ?? 'null') as Record<string, unknown>,
      horizontalScroll: document.documentElement.scrollWidth > document.documentElement.clientWidth,
      markersOutside: Array.from(document.querySelectorAll('svg.chart[data-chart="line"]')).flatMap((svg) => {
        // The x axis: the horizontal axis line; the plot spans it.
        const axis = Array.from(svg.querySelectorAll('line.axis')).find((l) => l.getAttribute('y1') === l.getAttribute('y2'));
        if (!axis) return ['(a line chart without an x axis)'];
        const plot = axis.getBoundingClientRect();
        const xMax = Number(svg.getAttribute('data-x-max'));
        return Array.from(svg.querySelectorAll('g.marker')).flatMap((g) => {
          const line = g.querySelector('line')?.getBoundingClientRect();
          const x = Number(g.getAttribute('data-x'));
          // Inside the plot, and where its time is on the axis (not clamped to an edge).
          const expected = plot.left + (x / xMax) * plot.width;
          const inside =
            line !== undefined &&
            x <= xMax &&
            line.left >= plot.left - 0.5 &&
            line.right <= plot.right + 0.5 &&
            Math.abs(line.left + line.width / 2 - expected) <= 1.5;
          return inside ? [] : [`${g.getAttribute('data-marker')} at ${x} (axis to ${xMax})`];
        });
      }),
    }));
    return {
      kind: info.kind,
      charts: info.charts,
      ready: info.ready,
      counts: { polylines: info.polylines, bars: info.bars, dots: info.dots, markers: info.markers },
      doc: info.doc,
      consoleErrors,
      failedRequests,
      horizontalScroll: info.horizontalScroll,
      markersOutside: info.markersOutside,
    };
  });
}
