/**
 * JUnit XML, as CI systems read it (GitHub's test reporters, GitLab, Jenkins): one testsuite of
 * testcases, a failed one carrying a <failure> whose message holds the numbers. A tiny serializer
 * of our own: the format needs a handful of elements, and every string in it is escaped here.
 * Pure.
 */
export interface JunitCase {
  readonly name: string;
  /** Set when the check failed: a one-line message (the attribute), and detail (the element's text). */
  readonly failure?: { readonly message: string; readonly detail?: string };
}

export interface JunitSuite {
  /** 'rmq-bench compare': the suite, and (dots for spaces) each case's classname. */
  readonly name: string;
  readonly cases: readonly JunitCase[];
}

/**
 * Text safe in XML content and in a double- or single-quoted attribute: & < > " ' escaped, and
 * what XML 1.0 cannot hold at all (control characters other than tab, newline and carriage
 * return; lone surrogates; U+FFFE, U+FFFF) replaced by U+FFFD.
 */
export function escapeXml(text: string): string {
  return (
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters XML 1.0 cannot hold are what this matches
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
  );
}

/** One suite as a JUnit XML document. */
export function junitXml(suite: JunitSuite): string {
  const failures = suite.cases.filter((c) => c.failure !== undefined).length;
  const counts = `tests="${suite.cases.length}" failures="${failures}" errors="0" skipped="0"`;
  const classname = escapeXml(suite.name.replace(/\s+/g, '.'));
  const cases = suite.cases.map((c) => {
    const open = `    <testcase classname="${classname}" name="${escapeXml(c.name)}"`;
    if (c.failure === undefined) return `${open}/>`;
    const detail = escapeXml(c.failure.detail ?? c.failure.message);
    return `${open}>\n      <failure message="${escapeXml(c.failure.message)}" type="failure">${detail}</failure>\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="rmq-bench" ${counts}>`,
    `  <testsuite name="${escapeXml(suite.name)}" ${counts}>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/**
 * A verdict command's suite: a testcase for its own verdict (when it has one; failed, with the
 * reasons the document gives), then one per threshold (`--max-lost`: failed with "lost 12 >
 * --max-lost 0"). A command with neither has one passing case, its name: it ran to the end.
 */
export function verdictSuite(
  command: string,
  own: { readonly ok: boolean; readonly reasons: readonly string[] } | null,
  thresholds: readonly { readonly flag: string; readonly ok: boolean; readonly message: string; readonly value: number | null; readonly limit: number }[],
): JunitSuite {
  const cases: JunitCase[] = [];
  if (own !== null) {
    const why = own.reasons.length > 0 ? own.reasons : ['the verdict failed'];
    cases.push(own.ok ? { name: 'verdict' } : { name: 'verdict', failure: { message: why.join('; '), detail: why.join('\n') } });
  }
  for (const t of thresholds) {
    const detail = `${t.message}\nmeasured: ${t.value ?? 'not measured'}\nlimit: ${t.limit}`;
    cases.push(t.ok ? { name: t.flag } : { name: t.flag, failure: { message: t.message, detail } });
  }
  if (cases.length === 0) cases.push({ name: command });
  return { name: `rmq-bench ${command}`, cases };
}
