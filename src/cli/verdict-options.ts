import { type Command, Option } from 'commander';
import type { BrokerInfo } from '../cluster/broker/broker-info.js';
import type { ResultOf } from '../report/kinds.js';
import { THRESHOLD_KINDS, type ThresholdKind } from '../report/threshold-measures.js';
import { THRESHOLDS, type ThresholdLimits, type ThresholdName } from '../report/thresholds.js';
import { durationMs, nonNegativeInt, writableFile } from './options.js';
import type { OutputFile } from './output.js';

/**
 * What a CI job holds a verdict command to: thresholds (--max-lost, --max-duplicates, --max-stall,
 * --max-election), those the command measures (report/threshold-measures.ts), and --junit, the
 * file its test report reads. Parsed and validated once, here; the command passes them on
 * untouched to emitVerdict.
 */
export interface VerdictOptions {
  readonly thresholds: ThresholdLimits;
  /** --junit: a JUnit XML file, one testcase per check (the verdict, each threshold), written after the result. */
  readonly junit: string | undefined;
}

/** --max-lost → maxLost, as commander names the value. */
const key = (name: ThresholdName): string => THRESHOLDS[name].flag.slice(2).replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

/** The threshold options of a kind's command, last on it. */
export function addVerdictOptions(command: Command, kind: ThresholdKind): Command {
  for (const name of THRESHOLD_KINDS[kind].names) {
    const t = THRESHOLDS[name];
    const option =
      t.unit === 'ms'
        ? new Option(`${t.flag} <duration>`, `fail the verdict (exit 1) past this: ${t.help}`).argParser(durationMs)
        : new Option(`${t.flag} <n>`, `fail the verdict (exit 1) past this many: ${t.help}`).argParser(nonNegativeInt);
    command.addOption(option);
  }
  return command.addOption(
    new Option('--junit <file>', 'also write a JUnit XML file: a testcase for the verdict and one per threshold').argParser(writableFile),
  );
}

/** The thresholds given, from commander's values (already parsed and validated by the options above). */
export function verdictOptions(raw: object, kind: ThresholdKind): VerdictOptions {
  const values = raw as Record<string, unknown>;
  const thresholds: ThresholdLimits = {};
  for (const name of THRESHOLD_KINDS[kind].names) {
    const v = values[key(name)];
    if (typeof v === 'number') thresholds[name] = v;
  }
  return { thresholds, junit: typeof values.junit === 'string' ? values.junit : undefined };
}

/**
 * The result of a verdict command, out: its report (and the threshold lines) and its document,
 * which with thresholds given lists their checks (`thresholds: {ok, checks}`) and whose `ok` is
 * then the command's verdict and every threshold's. Returns that verdict (main.ts maps it).
 */
export async function emitVerdict<K extends ThresholdKind>(
  output: { json: boolean; html?: string | undefined; broker: BrokerInfo | null },
  verdict: VerdictOptions,
  kind: K,
  r: ResultOf<K>,
  { files = [] }: { files?: readonly OutputFile[] } = {},
): Promise<boolean> {
  const [{ emit }, { KIND_VIEWS }, { measuresOf }, { checkThresholds, renderThresholds }, { junitXml, verdictSuite }, { failureReasons }] = await Promise.all([
    import('./output.js'),
    import('../report/kinds.js'),
    import('../report/threshold-measures.js'),
    import('../report/thresholds.js'),
    import('../report/junit.js'),
    import('../report/doc-figures.js'),
  ]);
  // The command's own verdict (failover has none).
  const ownOk = (r as { ok?: boolean }).ok;
  const report = checkThresholds(verdict.thresholds, measuresOf(kind, r));
  const ok = (ownOk ?? true) && report.ok;
  const junit = verdict.junit;
  const junitFile: OutputFile[] =
    junit === undefined
      ? []
      : [
          {
            flag: '--junit',
            path: junit,
            content: () =>
              junitXml(
                verdictSuite(
                  kind,
                  ownOk === undefined ? null : { ok: ownOk, reasons: ownOk ? [] : failureReasons(kind, r as Record<string, unknown>) },
                  report.checks,
                ),
              ),
            announce: `JUnit report: ${junit}`,
          },
        ];
  if (report.checks.length === 0) {
    emit(output, kind, r, { files: [...files, ...junitFile] });
    return ok;
  }
  const text = `${KIND_VIEWS[kind].text(r)}\n${renderThresholds(report)}`;
  const data: ResultOf<K> = { ...r, ok, thresholds: report };
  emit(output, kind, data, { text, files: [...files, ...junitFile] });
  return ok;
}
