import { describe, expect, it } from 'vitest';
import { barChart, dotTimeline, escapeHtml, lineChart, niceTicks, PALETTE, type Series } from '../../src/report/svg.js';

// The plot area, as the charts lay it out in a 920 × 280 view box: x from 64 to 770, y from 240 (0) up to 20 (the top tick).
const LEFT = 64;
const RIGHT = 770;
const BOTTOM = 240;
const TOP = 20;

function points(svg: string, series: string): [number, number][] {
  const m = new RegExp(`<polyline class="series" data-series="${series}"[^>]* points="([^"]*)"`).exec(svg);
  expect(m).not.toBeNull();
  if (m![1] === '') return [];
  return m![1]!.split(' ').map((p) => p.split(',').map(Number) as [number, number]);
}

function markers(svg: string): { label: string; x: number; text: string }[] {
  return [...svg.matchAll(/<g class="marker" data-marker="([^"]*)"(?: data-x="[^"]*")?><line x1="([^"]*)"[^>]*\/><text[^>]*>([^<]*)<\/text><\/g>/g)].map(
    (m) => ({
      label: m[1]!,
      x: Number(m[2]),
      text: m[3]!,
    }),
  );
}

function rect(svg: string, series: string, category: string): { x: number; y: number; width: number; height: number } {
  const m = new RegExp(`<rect class="bar" data-series="${series}" data-category="${category}" x="([^"]*)" y="([^"]*)" width="([^"]*)" height="([^"]*)"`).exec(
    svg,
  );
  expect(m).not.toBeNull();
  return { x: Number(m![1]), y: Number(m![2]), width: Number(m![3]), height: Number(m![4]) };
}

function dots(svg: string): { cx: number; cy: number; title: string }[] {
  return [...svg.matchAll(/<circle class="dot" cx="([^"]*)" cy="([^"]*)"[^>]*><title>([^<]*)<\/title>/g)].map((m) => ({
    cx: Number(m[1]),
    cy: Number(m[2]),
    title: m[3]!,
  }));
}

/** No NaN, Infinity or undefined anywhere, and every coordinate a finite number. */
function expectFinite(svg: string): void {
  expect(svg).not.toMatch(/NaN|Infinity|undefined/);
  for (const m of svg.matchAll(/\s(?:x|y|x1|x2|y1|y2|cx|cy|width|height)="([^"]*)"/g)) expect(Number.isFinite(Number(m[1]))).toBe(true);
  for (const m of svg.matchAll(/\s(?:viewBox|points)="([^"]*)"/g)) {
    for (const n of m[1]!.split(/[ ,]/).filter((s) => s !== '')) expect(Number.isFinite(Number(n))).toBe(true);
  }
  expect(svg).toMatch(/^<figure><figcaption>[^<]*<\/figcaption><svg class="chart" data-chart="(?:line|bar|timeline)"[\s\S]*<\/svg><\/figure>$/);
}

describe('escapeHtml', () => {
  const cases: [string, string][] = [
    ['plain', 'plain'],
    ['a < b', 'a &lt; b'],
    ['a > b', 'a &gt; b'],
    ['a & b', 'a &amp; b'],
    ['"double"', '&quot;double&quot;'],
    ["'single'", '&#39;single&#39;'],
    ['&amp;', '&amp;amp;'],
    ['<script>alert("x")</script>', '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'],
    ['', ''],
  ];
  it.each(cases)('%j → %j', (input, expected) => {
    expect(escapeHtml(input)).toBe(expected);
  });
});

describe('niceTicks', () => {
  const cases: { max: number; expected: number[] }[] = [
    { max: 0, expected: [0, 1] },
    { max: -5, expected: [0, 1] },
    { max: Number.NaN, expected: [0, 1] },
    { max: Number.POSITIVE_INFINITY, expected: [0, 1] },
    { max: 1, expected: [0, 0.2, 0.4, 0.6, 0.8, 1] },
    { max: 4, expected: [0, 1, 2, 3, 4] },
    { max: 7, expected: [0, 2, 4, 6, 8] },
    { max: 10, expected: [0, 2, 4, 6, 8, 10] },
    { max: 100, expected: [0, 20, 40, 60, 80, 100] },
    { max: 1_234, expected: [0, 500, 1_000, 1_500] },
    // 0.001 / 5 is a hair above 2e-4 in floating point, so the step is 5e-4.
    { max: 0.001, expected: [0, 0.0005, 0.001] },
    { max: 0.04, expected: [0, 0.01, 0.02, 0.03, 0.04] },
    { max: 0.3, expected: [0, 0.1, 0.2, 0.3] },
  ];
  it.each(cases)('max $max → $expected', ({ max, expected }) => {
    expect(niceTicks(max)).toEqual(expected);
  });

  it.each([0.07, 0.3, 1, 3, 9.99, 55, 101, 12_345, 987_654_321])('max %d: from 0, evenly stepped, the last tick covers max by less than a step', (max) => {
    const t = niceTicks(max);
    expect(t[0]).toBe(0);
    const step = t[1]! - t[0]!;
    for (let i = 1; i < t.length; i++) expect(t[i]! - t[i - 1]!).toBeCloseTo(step, 9);
    expect(t.at(-1)!).toBeGreaterThanOrEqual(max);
    expect(t.at(-1)! - step).toBeLessThan(max);
    // A round step: 1, 2 or 5 × 10^k.
    const mantissa = step / 10 ** Math.floor(Math.log10(step));
    expect([1, 2, 5].some((f) => Math.abs(mantissa - f) < 1e-9)).toBe(true);
  });
});

describe('lineChart: scales', () => {
  const base = { title: 'rates', xLabel: 'seconds', yLabel: 'per second' };

  it('the domain ends map to the plot edges: (0, 0) bottom left, (xMax, yMax) top right', () => {
    const svg = lineChart({
      ...base,
      series: [
        {
          name: 'rate',
          points: [
            [0, 0],
            [5, 50],
            [10, 100],
          ],
        },
      ],
    });
    expect(points(svg, 'rate')).toEqual([
      [LEFT, BOTTOM],
      [(LEFT + RIGHT) / 2, (BOTTOM + TOP) / 2],
      [RIGHT, TOP],
    ]);
  });

  it('the axes end on the next round tick past the data (x 7 → 8, y 70 → 80)', () => {
    const svg = lineChart({ ...base, series: [{ name: 'rate', points: [[7, 70]] }] });
    const [[x, y]] = points(svg, 'rate') as [[number, number]];
    expect(x).toBeCloseTo(LEFT + (7 / 8) * (RIGHT - LEFT), 1);
    expect(y).toBeCloseTo(BOTTOM - (70 / 80) * (BOTTOM - TOP), 1);
  });

  it('a right-axis series has its own scale: its max reaches the top too', () => {
    const svg = lineChart({
      ...base,
      yRightLabel: 'in flight',
      series: [
        {
          name: 'rate',
          points: [
            [0, 0],
            [10, 1_000],
          ],
        },
        {
          name: 'in flight',
          points: [
            [0, 0],
            [10, 50],
          ],
          rightAxis: true,
        },
      ],
    });
    expect(points(svg, 'rate').at(-1)).toEqual([RIGHT, TOP]);
    expect(points(svg, 'in flight').at(-1)).toEqual([RIGHT, TOP]);
    expect(svg).toContain('stroke-dasharray="4 3" points=');
    expect(svg).toContain('>in flight (right)</text>');
    // Right-axis ticks: 0 … 50.
    const right = [...svg.matchAll(/<text class="tick right"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(right).toEqual(['0', '10', '20', '30', '40', '50']);
  });

  it('no right axis ticks without a right-axis series', () => {
    const svg = lineChart({ ...base, series: [{ name: 'rate', points: [[1, 1]] }] });
    expect(svg).not.toContain('tick right');
  });

  it('colours: the palette in order unless a series brings its own', () => {
    const svg = lineChart({
      ...base,
      series: [
        { name: 'a', points: [[1, 1]] },
        { name: 'b', points: [[1, 1]], color: '#123456' },
        { name: 'c', points: [[1, 1]] },
      ],
    });
    const strokes = [...svg.matchAll(/<polyline[^>]* stroke="([^"]*)"/g)].map((m) => m[1]);
    expect(strokes).toEqual([PALETTE[0], '#123456', PALETTE[2]]);
  });

  it('markers: at their x, in order; one past the data (a rejoin after the run) widens the axis, so every marker is inside the plot', () => {
    const svg = lineChart({
      ...base,
      series: [
        {
          name: 'rate',
          points: [
            [0, 0],
            [10, 100],
          ],
        },
      ],
      markers: [
        { x: 0, label: 'start' },
        { x: 5, label: 'kill rabbit1', color: '#dc2626' },
        { x: 10, label: 'end' },
        { x: 25, label: 'rejoined' },
      ],
    });
    const m = markers(svg);
    expect(m.map((x) => [x.label, x.text])).toEqual([
      ['start', 'start'],
      ['kill rabbit1', 'kill rabbit1'],
      ['end', 'end'],
      ['rejoined', 'rejoined'],
    ]);
    // The axis ends on the round tick at or past 25 (25 itself): x = LEFT + t / 25 × width.
    const at = (t: number): number => LEFT + (t / 25) * (RIGHT - LEFT);
    for (const [i, t] of [0, 5, 10, 25].entries()) expect(Math.abs(m[i]!.x - at(t))).toBeLessThanOrEqual(0.051);
    for (const x of m) expect(x.x).toBeLessThanOrEqual(RIGHT);
    expect(svg).toMatch(/data-marker="kill rabbit1" data-x="5"><line [^>]*stroke="#dc2626"/);
    // A label in the right third ends at its line (text-anchor end), so it stays inside too.
    expect(svg).toMatch(/data-marker="rejoined"[\s\S]*?text-anchor="end">rejoined</);
  });

  it('with no data points the markers set the x range', () => {
    const svg = lineChart({ ...base, series: [{ name: 'rate', points: [] }], markers: [{ x: 4, label: 'kill' }] });
    expect(markers(svg)).toEqual([{ label: 'kill', x: RIGHT, text: 'kill' }]);
  });

  it('titles, labels and names are escaped', () => {
    const svg = lineChart({
      title: 'a <b> & "c"',
      xLabel: 'x<',
      yLabel: 'y&',
      series: [{ name: 's"1', points: [[1, 1]] }],
      markers: [{ x: 1, label: '<m>' }],
    });
    expect(svg).toContain('<figcaption>a &lt;b&gt; &amp; &quot;c&quot;</figcaption>');
    expect(svg).toContain('aria-label="a &lt;b&gt; &amp; &quot;c&quot;"');
    expect(svg).toContain('>x&lt;</text>');
    expect(svg).toContain('>y&amp;</text>');
    expect(svg).toContain('data-series="s&quot;1"');
    expect(svg).toContain('data-marker="&lt;m&gt;"');
    expect(svg).not.toMatch(/<b>|<m>/);
  });

  const edge: { name: string; series: Series[]; markers?: { x: number; label: string }[] }[] = [
    { name: 'no series at all', series: [] },
    {
      name: 'empty series',
      series: [
        { name: 'rate', points: [] },
        { name: 'in flight', points: [], rightAxis: true },
      ],
    },
    { name: 'empty series with markers', series: [{ name: 'rate', points: [] }], markers: [{ x: 1.5, label: 'kill' }] },
    { name: 'empty series with a marker at 0', series: [{ name: 'rate', points: [] }], markers: [{ x: 0, label: 'kill' }] },
    { name: 'one sample', series: [{ name: 'rate', points: [[0.1, 500]] }] },
    {
      name: 'one sample at 0 s, value 0',
      series: [
        { name: 'rate', points: [[0, 0]] },
        { name: 'in flight', points: [[0, 0]], rightAxis: true },
      ],
    },
    {
      name: 'all-zero values',
      series: [
        {
          name: 'rate',
          points: [
            [0, 0],
            [1, 0],
            [2, 0],
          ],
        },
        { name: 'in flight', points: [[2, 0]], rightAxis: true },
      ],
    },
    {
      name: 'a run of 0 ms: every point at x = 0, markers at 0',
      series: [
        {
          name: 'rate',
          points: [
            [0, 0],
            [0, 10],
          ],
        },
      ],
      markers: [
        { x: 0, label: 'kill' },
        { x: 0, label: 'restored' },
      ],
    },
    { name: 'a run of 0 ms with a marker later', series: [{ name: 'rate', points: [[0, 5]] }], markers: [{ x: 3, label: 'rejoined' }] },
  ];

  it.each(edge)('edge case, no NaN: $name', ({ series, markers: m }) => {
    const svg = lineChart({ ...base, series, ...(m ? { markers: m } : {}) });
    expectFinite(svg);
    for (const s of series)
      for (const [x, y] of points(svg, s.name)) {
        expect(x).toBeGreaterThanOrEqual(LEFT);
        expect(x).toBeLessThanOrEqual(RIGHT);
        expect(y).toBeGreaterThanOrEqual(TOP);
        expect(y).toBeLessThanOrEqual(BOTTOM);
      }
    for (const mk of markers(svg)) {
      expect(mk.x).toBeGreaterThanOrEqual(LEFT);
      expect(mk.x).toBeLessThanOrEqual(RIGHT);
    }
  });

  it('all-zero values lie on the x axis', () => {
    const svg = lineChart({
      ...base,
      series: [
        {
          name: 'rate',
          points: [
            [0, 0],
            [1, 0],
          ],
        },
      ],
    });
    expect(points(svg, 'rate').map(([, y]) => y)).toEqual([BOTTOM, BOTTOM]);
  });
});

describe('barChart', () => {
  const base = { title: 'bars', yLabel: 'messages' };

  it('a value at the top tick fills the plot height; 0 is a flat bar on the axis', () => {
    const svg = barChart({ ...base, categories: ['a', 'b'], series: [{ name: 'n', values: [100, 0] }] });
    expect(rect(svg, 'n', 'a')).toMatchObject({ y: TOP, height: BOTTOM - TOP });
    expect(rect(svg, 'n', 'b')).toMatchObject({ y: BOTTOM, height: 0 });
  });

  it('heights are proportional to the value over the top tick (30 of 50)', () => {
    const svg = barChart({
      ...base,
      categories: ['a'],
      series: [
        { name: 'n', values: [30] },
        { name: 'm', values: [50] },
      ],
    });
    expect(rect(svg, 'n', 'a').height).toBeCloseTo((30 / 50) * (BOTTOM - TOP), 1);
    expect(rect(svg, 'm', 'a').height).toBe(BOTTOM - TOP);
  });

  it('groups span the plot: first group starts near the left edge, last ends before the right edge', () => {
    const svg = barChart({
      ...base,
      categories: ['a', 'b', 'c'],
      series: [
        { name: 'n', values: [1, 2, 3] },
        { name: 'm', values: [3, 2, 1] },
      ],
    });
    const first = rect(svg, 'n', 'a');
    const last = rect(svg, 'm', 'c');
    const groupW = (RIGHT - LEFT) / 3;
    expect(first.x).toBeCloseTo(LEFT + groupW * 0.1, 1);
    expect(last.x + last.width).toBeLessThanOrEqual(RIGHT);
    expect(last.x + last.width).toBeCloseTo(LEFT + groupW * 2.9 - 1, 0);
    // Series side by side within a group.
    expect(rect(svg, 'm', 'a').x).toBeGreaterThan(first.x + first.width - 0.1);
  });

  it('a missing value (short series) is a zero bar', () => {
    const svg = barChart({ ...base, categories: ['a', 'b'], series: [{ name: 'n', values: [5] }] });
    expect(rect(svg, 'n', 'b')).toMatchObject({ y: BOTTOM, height: 0 });
    expect(svg).toContain('<title>b n: 0</title>');
  });

  it('titles carry the value, big numbers shortened', () => {
    const svg = barChart({
      ...base,
      categories: ['async/256'],
      series: [
        { name: 'publish /s', values: [12_345] },
        { name: 'p99', values: [2_500_000] },
      ],
    });
    expect(svg).toContain('<title>async/256 publish /s: 12.3k</title>');
    expect(svg).toContain('<title>async/256 p99: 2.5M</title>');
  });

  it('a non-finite value is a zero bar and does not stretch the scale', () => {
    const svg = barChart({ ...base, categories: ['a', 'b', 'c'], series: [{ name: 'n', values: [Number.NaN, Number.POSITIVE_INFINITY, 50] }] });
    expect(rect(svg, 'n', 'a')).toMatchObject({ y: BOTTOM, height: 0 });
    expect(rect(svg, 'n', 'b')).toMatchObject({ y: BOTTOM, height: 0 });
    expect(rect(svg, 'n', 'c')).toMatchObject({ y: TOP, height: BOTTOM - TOP });
  });

  it('category and series names are escaped', () => {
    const svg = barChart({ ...base, categories: ['<q>'], series: [{ name: 'a&b', values: [1] }] });
    expect(svg).toContain('data-series="a&amp;b" data-category="&lt;q&gt;"');
    expect(svg).not.toContain('<q>');
  });

  const edge: { name: string; categories: string[]; series: { name: string; values: number[] }[] }[] = [
    { name: 'no categories, no series', categories: [], series: [] },
    { name: 'no categories', categories: [], series: [{ name: 'n', values: [] }] },
    { name: 'categories, no series', categories: ['a', 'b'], series: [] },
    {
      name: 'all zero',
      categories: ['a', 'b'],
      series: [
        { name: 'n', values: [0, 0] },
        { name: 'm', values: [0, 0] },
      ],
    },
    { name: 'one category, one value', categories: ['a'], series: [{ name: 'n', values: [1] }] },
    { name: 'many categories (bars at their minimum width)', categories: Array.from({ length: 200 }, (_, i) => `c${i}`), series: [{ name: 'n', values: [1] }] },
  ];

  it.each(edge)('edge case, no NaN: $name', ({ categories, series }) => {
    const svg = barChart({ ...base, categories, series });
    expectFinite(svg);
    for (const m of svg.matchAll(/<rect class="bar"[^>]* height="([^"]*)"/g)) expect(Number(m[1])).toBeGreaterThanOrEqual(0);
  });
});

describe('dotTimeline', () => {
  const base = { title: 'deliveries', xLabel: 'seconds' };

  it('a dot at 0 sits on the left edge; one at the top tick on the right edge', () => {
    const svg = dotTimeline({
      ...base,
      lanes: [
        {
          name: 'm-1',
          dots: [
            { x: 0, label: 'first' },
            { x: 2, label: 'last' },
          ],
        },
      ],
    });
    expect(dots(svg)).toEqual([
      { cx: LEFT, cy: expect.any(Number), title: 'first' },
      { cx: RIGHT, cy: expect.any(Number), title: 'last' },
    ]);
  });

  it('each lane on its own row, in order, names of more than 10 characters shortened to their end', () => {
    const svg = dotTimeline({
      ...base,
      lanes: [
        { name: 'short', dots: [{ x: 1, label: 'a' }] },
        { name: 'a-much-longer-id-42', dots: [{ x: 1, label: 'b' }] },
      ],
    });
    const [a, b] = dots(svg);
    expect(b!.cy).toBeGreaterThan(a!.cy);
    expect(svg).toContain('>short</text>');
    expect(svg).toContain('>…ger-id-42</text>');
    expect(svg).not.toContain('a-much-longer-id-42');
  });

  it('the height grows with the lanes', () => {
    const h = (n: number): number =>
      Number(/height="([^"]*)"/.exec(dotTimeline({ ...base, lanes: Array.from({ length: n }, (_, i) => ({ name: `m${i}`, dots: [] })) }))![1]);
    expect(h(2)).toBeLessThan(h(20));
    expect(h(20)).toBeLessThan(h(40));
  });

  it('dot colours: its own, else the first palette colour', () => {
    const svg = dotTimeline({
      ...base,
      lanes: [
        {
          name: 'm',
          dots: [
            { x: 1, label: 'a', color: '#abcdef' },
            { x: 2, label: 'b' },
          ],
        },
      ],
    });
    expect([...svg.matchAll(/<circle[^>]* fill="([^"]*)"/g)].map((m) => m[1])).toEqual(['#abcdef', PALETTE[0]]);
  });

  const edge: { name: string; lanes: { name: string; dots: { x: number; label: string }[] }[] }[] = [
    { name: 'no lanes', lanes: [] },
    { name: 'a lane with no dots', lanes: [{ name: 'm', dots: [] }] },
    { name: 'one dot at 0', lanes: [{ name: 'm', dots: [{ x: 0, label: 'a' }] }] },
    {
      name: 'every dot at 0',
      lanes: [
        { name: 'm', dots: [{ x: 0, label: 'a' }] },
        { name: 'n', dots: [{ x: 0, label: 'b' }] },
      ],
    },
  ];

  it.each(edge)('edge case, no NaN: $name', ({ lanes }) => {
    const svg = dotTimeline({ ...base, lanes });
    expectFinite(svg);
    for (const d of dots(svg)) {
      expect(d.cx).toBeGreaterThanOrEqual(LEFT);
      expect(d.cx).toBeLessThanOrEqual(RIGHT);
    }
  });
});
