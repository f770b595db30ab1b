import { Option } from 'commander';
import path from 'node:path';
import { DataError, NotFoundError, UsageError } from '../../errors.js';
import { defineCommand } from '../command.js';
import { jsonOption, writableFile } from '../options.js';

/**
 * `rmq-bench report <files or folders...> --html index.html`: one self-contained page for a set of
 * --json documents. Its verdict: every document read (JSON, with the fields the report reads of
 * its kind: src/report/doc-shape.ts), and none failed; run() returns it and main.ts makes a
 * false one exit 1, the page written all the same. An input that is not a document it can read
 * is an error after the page is written: exit 65 (malformed), or 66 (unreadable).
 */
interface ReportCliOptions {
  json: boolean;
  inputs: string[];
  html: string;
}

export const report = defineCommand({
  name: 'report',
  examples: ['report smoke-results --html report.html', 'report compare.json bench.json --html index.html --json'],
  register: (command, dispatch: (o: ReportCliOptions) => Promise<void>) =>
    command
      .summary('one HTML page for a set of --json documents')
      .description("one self-contained HTML page for a set of --json documents: a summary table, then each one's charts and JSON")
      .argument('<files-or-folders...>', 'JSON documents, or folders: every *.json file in one (not recursive), by name')
      .addOption(
        new Option('--html <file>', 'the page to write (its directory must exist and be writable; an existing file is replaced)')
          .argParser(writableFile)
          .makeOptionMandatory(),
      )
      .addOption(jsonOption('print one JSON document on stdout: each input with its status (people-facing output stays on stderr)'))
      .action((inputs: string[], o: { json: boolean; html: string }) => {
        // Overwriting an input with the page would lose it; a folder's files are checked when listed.
        if (inputs.some((i) => path.resolve(i) === path.resolve(o.html))) throw new UsageError(`the page ${o.html} is also one of the inputs`);
        return dispatch({ json: o.json, inputs, html: o.html });
      }),
  async run(ctx, o) {
    const { collectReportInputs } = await import('../../scenarios/broker-tools/report.js');
    const { renderCombinedReport, reportEntries, reportOk, reportSummary } = await import('../../report/combined.js');
    const { emit } = await import('../output.js');
    const { inputs, notes } = await collectReportInputs(o.inputs, o.html);
    for (const note of notes) ctx.log(note);
    const entries = reportEntries(inputs);
    // The summary first, then the page: a page that cannot be written still leaves the summary (exit 74).
    emit({ json: o.json, broker: null }, 'report', reportSummary(entries, o.html), {
      files: [{ flag: '--html', path: o.html, content: () => renderCombinedReport(entries, o.html) }],
    });
    // The page is written all the same; an input it could not read is the run's error, not a verdict.
    const unread = entries.filter((e) => e.status === 'malformed' || e.status === 'unreadable');
    if (unread.length > 0) {
      const failed = entries.filter((e) => e.status === 'failed').length;
      const what = `${unread.length} of ${entries.length} documents could not be read (${unread.map((e) => e.file).join(', ')})${failed > 0 ? `, and ${failed} FAILED` : ''}; the page has the rest`;
      throw unread.some((e) => e.status === 'malformed') ? new DataError(what) : new NotFoundError(what);
    }
    return { ok: reportOk(entries) };
  },
});
