import { open, writeFile } from 'node:fs/promises';
import type { Context } from '../../context.js';
import { DataError, InterruptedError, UsageError, errorMessage } from '../../errors.js';
import { renderBench, renderCsv, renderSampleLine } from '../../report/bench.js';
import { runBench } from '../../scenarios/bench.js';
import { emit } from '../output.js';
import type { BenchInvocation } from '../program-bench.js';

/** Before the run: a --csv path we cannot write is a usage error, not a lost run. */
async function checkWritable(file: string): Promise<void> {
  try {
    const fh = await open(file, 'a');
    await fh.close();
  } catch (err) {
    throw new UsageError(`--csv ${file}: cannot write there (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)})`);
  }
}

export async function bench(ctx: Context, o: BenchInvocation['options']): Promise<number> {
  const { json, html, csvFile, ...opts } = o;
  if (csvFile) await checkWritable(csvFile);
  const { progress } = ctx;
  const r = await runBench(ctx, opts, {
    onRunStart: (spec, queue) => progress.info(`${spec.label}: publishing into ${queue}`),
    onSample: (spec, s) => progress.info(renderSampleLine(spec.label, s, spec.mode !== 'none')),
  });
  emit({ json, html }, 'bench', r, renderBench(r));
  if (csvFile) {
    try {
      await writeFile(csvFile, renderCsv(r.runs));
    } catch (err) {
      throw new DataError(`--csv ${csvFile}: could not write the samples (${errorMessage(err)})`);
    }
  }
  if (r.interrupted) throw new InterruptedError('interrupted: the figures above are what was measured until Ctrl+C');
  return 0;
}
