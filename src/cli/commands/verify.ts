import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { DataError, NotFoundError, UsageError } from '../../errors.js';
import { defineCommand } from '../command.js';
import { addVerdictOptions, emitVerdict, type VerdictOptions, verdictOptions } from '../verdict-options.js';
import { durationOption, htmlOption, jsonOption, urlsOption, urlsOrDefault } from '../options.js';
import type { ProducerReport } from '../../scenarios/traffic/producer.js';

/**
 * `rmq-bench verify`: drain the queue once and reconcile it with the ledgers `producer --ledger`
 * wrote: one, or several producers' (a Kubernetes Job of N pods), each read going to its run's.
 */
interface VerifyCliOptions {
  json: boolean;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  /** Each --ledger as given: a ledger file, or a folder of them. */
  ledgers: string[];
  queue: string | undefined;
  urls: string[] | undefined;
  idleMs: number;
  /** --max-lost, --max-duplicates, --junit. */
  verdict: VerdictOptions;
}

/** Why a path could not be read, in words: the cause people meet, else the system's code. */
function whyUnreadable(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'no such file or folder';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'a folder, not a file';
  return code ?? String(err);
}

/**
 * The ledger files the --ledger paths name, in the order given: a file as it is; a folder, every
 * *.json file directly in it, by name (not recursive). A path that does not exist, or a folder
 * without one, is a NotFoundError.
 */
export async function ledgerFiles(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const p of paths) {
    let isFolder: boolean;
    try {
      isFolder = (await stat(p)).isDirectory();
    } catch (err) {
      throw new NotFoundError(`cannot read the ledger ${p}: ${whyUnreadable(err)}`);
    }
    if (!isFolder) {
      files.push(p);
      continue;
    }
    const entries = await readdir(p, { withFileTypes: true }).catch((err: unknown) => {
      throw new NotFoundError(`cannot read the folder ${p}: ${whyUnreadable(err)}`);
    });
    const found = entries
      .filter((e) => e.isFile() && e.name.endsWith('.json'))
      .map((e) => path.join(p, e.name))
      .sort();
    if (found.length === 0) throw new NotFoundError(`no ledger in the folder ${p} (no *.json file in it)`);
    files.push(...found);
  }
  return files;
}

export async function readLedger(file: string): Promise<ProducerReport> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new NotFoundError(`cannot read the ledger ${file}: ${whyUnreadable(err)}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new DataError(`${file} is not a JSON document (was it written by 'rmq-bench producer --ledger'?)`);
  }
  const r = doc as Partial<ProducerReport>;
  if (r.kind !== 'producer-report' || typeof r.queue !== 'string' || r.ledger === undefined) {
    throw new DataError(`${file} is not a producer report (kind '${String(r.kind)}')`);
  }
  return r as ProducerReport;
}

/**
 * The queue to drain: --queue, else the one every report names. Reports that name different
 * queues without --queue: a UsageError naming them (a flag settles it).
 */
export function queueToDrain(reports: readonly { file: string; queue: string }[], given: string | undefined): string {
  if (given !== undefined) return given;
  const queues = [...new Set(reports.map((r) => r.queue))];
  if (queues.length === 1) return queues[0]!;
  const named = queues.map(
    (q) =>
      `${q} (${reports
        .filter((r) => r.queue === q)
        .map((r) => r.file)
        .join(', ')})`,
  );
  throw new UsageError(`the ledgers name ${queues.length} queues, ${named.join('; ')}: say which to drain with --queue`);
}

/** --ledger, repeatable: each value appended to those before it. */
const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export const verify = defineCommand({
  name: 'verify',
  examples: ['verify --ledger run.json', 'verify --ledger p1.json --ledger p2.json --json', 'verify --ledger ledgers/ --idle-timeout 500ms'],
  register: (command, dispatch: (o: VerifyCliOptions) => Promise<void>) =>
    addVerdictOptions(
      command
        .summary("reconcile the queue with producers' ledgers")
        .description(
          'drain the queue once and reconcile it with one producer ledger or several (one per process): lost, silently lost, duplicated, recovered, unexpected; per ledger and in total',
        )
        .requiredOption(
          '--ledger <file>',
          'a ledger `rmq-bench producer --ledger` wrote, or a folder of them (its *.json files); repeat for several processes',
          collect,
        )
        .option('--queue <name>', 'queue to drain (default: the one the ledgers name)')
        .addOption(urlsOption())
        .addOption(durationOption('--idle-timeout <duration>', 'stop once nothing arrived for this long and the queue is empty', '2s'))
        .addOption(jsonOption())
        .addOption(htmlOption()),
      'verify',
    ).action((o: { json: boolean; html?: string; ledger: string[]; queue?: string; urls?: string[]; idleTimeout: number }) =>
      dispatch({ json: o.json, html: o.html, ledgers: o.ledger, queue: o.queue, urls: o.urls, idleMs: o.idleTimeout, verdict: verdictOptions(o, 'verify') }),
    ),
  async run(ctx, o) {
    const files = await ledgerFiles(o.ledgers);
    const reports: { file: string; report: ProducerReport }[] = [];
    for (const file of files) reports.push({ file, report: await readLedger(file) });
    const { drainQueue } = await import('../../client/amqp091/drain.js');
    const { Ledger } = await import('../../ledger/ledger.js');
    const { reconcile } = await import('../../ledger/reconcile.js');
    const { duplicateRunIds, LedgerRouter, totalOf } = await import('../../ledger/several.js');
    const entries = reports.map(({ file, report }) => ({ file, queue: report.queue, ledger: Ledger.fromJSON(report.ledger, file) }));
    const twice = duplicateRunIds(entries.map((e) => ({ file: e.file, runId: e.ledger.runId })))[0];
    if (twice !== undefined) {
      // Data, not usage: two files hold one run (a copy, or one file given twice); their reads could not be told apart.
      throw new DataError(`run ${twice.runId} is in ${twice.files.length} ledgers (${twice.files.join(', ')}): give each producer's ledger once`);
    }
    const queue = queueToDrain(entries, o.queue);
    const router = new LedgerRouter(entries.map((e) => e.ledger));
    const of = entries.length === 1 ? '' : ` for ${entries.length} ledgers`;
    ctx.progress.start(`draining ${queue}${of}`);
    const drain = await drainQueue(router, {
      urls: urlsOrDefault(o.urls, ctx.config),
      queue,
      idleMs: o.idleMs,
      timeoutMs: 600_000,
      heartbeatS: 5,
      signal: ctx.signal,
      onProgress: (n) => ctx.progress.update(`draining ${queue}${of}: ${n} read`),
    });
    ctx.progress.succeed(`drained ${queue}: ${drain.deliveries} messages in ${Math.round(drain.durationMs)} ms`);
    const ledgers = entries.map((e) => ({ file: e.file, runId: e.ledger.runId, queue: e.queue, reconciliation: reconcile(e.ledger) }));
    const total = totalOf(ledgers, router.foreign);
    // One ledger: its reconciliation stays at the top level, where a single-ledger document has it.
    const one = ledgers.length === 1 ? { reconciliation: ledgers[0]!.reconciliation } : {};
    const result = { queue, drain, ok: total.verdict.ok, ...one, ledgers, total };
    return { ok: await emitVerdict({ json: o.json, html: o.html, broker: await ctx.broker() }, o.verdict, 'verify', result) };
  },
});
