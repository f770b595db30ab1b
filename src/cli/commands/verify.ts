import { readFile } from 'node:fs/promises';
import { DataError, NotFoundError } from '../../errors.js';
import { defineCommand } from '../command.js';
import { durationOption, htmlOption, jsonOption, urlsOption, urlsOrDefault } from '../options.js';
import type { ProducerReport } from '../../scenarios/producer.js';

/** `rmq-bench verify`: drain the queue and reconcile it with the ledger `producer --ledger` wrote. */
export interface VerifyCliOptions {
  json: boolean;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  reportFile: string;
  queue: string | undefined;
  urls: string[] | undefined;
  idleMs: number;
}

async function readReport(file: string): Promise<ProducerReport> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new NotFoundError(`cannot read the report ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
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

export const verify = defineCommand({
  name: 'verify',
  examples: ['verify --ledger run.json', 'verify --ledger run.json --idle 500ms --json'],
  register: (command, dispatch: (o: VerifyCliOptions) => Promise<void>) =>
    command
      .summary("reconcile the queue with a producer's report")
      .description('drain the queue and reconcile it with a producer report: lost, silently lost, duplicated, recovered, unexpected')
      .requiredOption('--ledger <file>', 'the ledger `rmq-bench producer --ledger` wrote')
      .option('--queue <name>', 'queue to drain (default: the report’s)')
      .addOption(urlsOption())
      .addOption(durationOption('--idle <duration>', 'stop once nothing arrived for this long and the queue is empty', '2s'))
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: { json: boolean; html?: string; ledger: string; queue?: string; urls?: string[]; idle: number }) =>
        dispatch({ json: o.json, html: o.html, reportFile: o.ledger, queue: o.queue, urls: o.urls, idleMs: o.idle }),
      ),
  async run(ctx, o) {
    const report = await readReport(o.reportFile);
    const { drainQueue } = await import('../../amqp/drain.js');
    const { Ledger } = await import('../../ledger/ledger.js');
    const { reconcile } = await import('../../ledger/reconcile.js');
    const { emit } = await import('../output.js');
    const ledger = Ledger.fromJSON(report.ledger, o.reportFile);
    const queue = o.queue ?? report.queue;
    ctx.progress.start(`draining ${queue}`);
    const drain = await drainQueue(ledger, {
      urls: urlsOrDefault(o.urls, ctx.config),
      queue,
      idleMs: o.idleMs,
      timeoutMs: 600_000,
      heartbeatS: 5,
      signal: ctx.signal,
      onProgress: (n) => ctx.progress.update(`draining ${queue}: ${n} read`),
    });
    ctx.progress.succeed(`drained ${queue}: ${drain.deliveries} messages in ${Math.round(drain.durationMs)} ms`);
    const r = reconcile(ledger);
    emit(o, 'verify', { queue, drain, reconciliation: r });
    return { ok: r.verdict.ok };
  },
});
