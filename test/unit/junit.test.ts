import { describe, expect, it } from 'vitest';
import { escapeXml, junitXml, verdictSuite } from '../../src/report/junit.js';
import { checkThresholds } from '../../src/report/thresholds.js';

describe('escapeXml: text safe in content and attributes', () => {
  it.each([
    ['lost 12 > --max-lost 0', 'lost 12 &gt; --max-lost 0'],
    ['a & b < c', 'a &amp; b &lt; c'],
    [`say "hi" and 'bye'`, 'say &quot;hi&quot; and &apos;bye&apos;'],
    ['&amp; stays escaped once more', '&amp;amp; stays escaped once more'],
    ['tab\tnewline\nreturn\r kept', 'tab\tnewline\nreturn\r kept'],
    ['bell \u0007 and NUL \u0000 and escape \u001b[31m', 'bell \uFFFD and NUL \uFFFD and escape \uFFFD[31m'],
    ['a lone surrogate \uD800 here', 'a lone surrogate \uFFFD here'],
    ['a pair 😀 kept', 'a pair 😀 kept'],
    ['', ''],
  ])('%j', (text, escaped) => expect(escapeXml(text)).toBe(escaped));
});

describe('junitXml: one suite, a testcase per check', () => {
  it('passes and failures, counted, with the message in the attribute and the detail as text', () => {
    const xml = junitXml({
      name: 'rmq-bench compare',
      cases: [{ name: 'verdict' }, { name: '--max-lost', failure: { message: 'lost 12 > --max-lost 0', detail: 'lost 12 > --max-lost 0\nmeasured: 12' } }],
    });
    expect(xml).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites name="rmq-bench" tests="2" failures="1" errors="0" skipped="0">',
        '  <testsuite name="rmq-bench compare" tests="2" failures="1" errors="0" skipped="0">',
        '    <testcase classname="rmq-bench.compare" name="verdict"/>',
        '    <testcase classname="rmq-bench.compare" name="--max-lost">',
        '      <failure message="lost 12 &gt; --max-lost 0" type="failure">lost 12 &gt; --max-lost 0\nmeasured: 12</failure>',
        '    </testcase>',
        '  </testsuite>',
        '</testsuites>',
        '',
      ].join('\n'),
    );
  });
  it('names and messages with markup in them stay inside their attribute', () => {
    const xml = junitXml({ name: 'rmq-bench "x" <y>', cases: [{ name: `a"/><evil x='1`, failure: { message: '<b>&' } }] });
    expect(xml).toContain('name="a&quot;/&gt;&lt;evil x=&apos;1"');
    expect(xml).toContain('<failure message="&lt;b&gt;&amp;" type="failure">&lt;b&gt;&amp;</failure>');
    expect(xml).not.toContain('<evil');
    expect(xml).toContain('classname="rmq-bench.&quot;x&quot;.&lt;y&gt;"');
  });
});

describe('verdictSuite: the verdict, then one testcase per threshold', () => {
  const cases: {
    name: string;
    own: { ok: boolean; reasons: string[] } | null;
    limits: Parameters<typeof checkThresholds>[0];
    measures: Parameters<typeof checkThresholds>[1];
    expected: { name: string; failure?: string }[];
  }[] = [
    {
      name: 'a passed verdict and a threshold passed',
      own: { ok: true, reasons: [] },
      limits: { lost: 0 },
      measures: { lost: 12 - 12 },
      expected: [{ name: 'verdict' }, { name: '--max-lost' }],
    },
    {
      name: 'a passed verdict, a threshold past: the numbers in the failure',
      own: { ok: true, reasons: [] },
      limits: { lost: 0, stall: 5_000 },
      measures: { lost: 12, stall: 800 },
      expected: [{ name: 'verdict' }, { name: '--max-lost', failure: 'lost 12 > --max-lost 0' }, { name: '--max-stall' }],
    },
    {
      name: 'a failed verdict: its reasons',
      own: { ok: false, reasons: ['confirms-on run 1: 2 confirmed messages lost', '1 unexpected'] },
      limits: {},
      measures: {},
      expected: [{ name: 'verdict', failure: 'confirms-on run 1: 2 confirmed messages lost; 1 unexpected' }],
    },
    {
      name: 'a failed verdict without reasons',
      own: { ok: false, reasons: [] },
      limits: {},
      measures: {},
      expected: [{ name: 'verdict', failure: 'the verdict failed' }],
    },
    {
      name: 'no verdict of its own (failover): the thresholds only',
      own: null,
      limits: { election: 5_000 },
      measures: { election: 12_000 },
      expected: [{ name: '--max-election', failure: 'election 12s > --max-election 5s' }],
    },
    { name: 'neither: one passing case, the command', own: null, limits: {}, measures: {}, expected: [{ name: 'failover' }] },
  ];
  it.each(cases)('$name', ({ own, limits, measures, expected }) => {
    const suite = verdictSuite('failover', own, checkThresholds(limits, measures).checks);
    expect(suite.cases.map((c) => ({ name: c.name, ...(c.failure ? { failure: c.failure.message } : {}) }))).toEqual(expected);
  });
});
