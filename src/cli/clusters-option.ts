import { InvalidArgumentError, Option } from 'commander';
import { clusterNameProblem } from '../config.js';
import type { Context } from '../context.js';

/**
 * --clusters: a demo run on several clusters in turn (each by the name `cluster up --name`
 * recorded, with its ports), printed side by side with the version as a column.
 */

/** --clusters' parser: comma-separated cluster names, each checked as --name is, none twice. */
function clusterNames(value: string): string[] {
  const names = value
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (names.length === 0) throw new InvalidArgumentError('no cluster named');
  for (const n of names) {
    const problem = clusterNameProblem(n);
    if (problem) throw new InvalidArgumentError(`'${n}' ${problem}`);
  }
  if (new Set(names).size !== names.length) throw new InvalidArgumentError('a cluster is named twice');
  return names;
}

export const clustersOption = (): Option =>
  new Option(
    '--clusters <names>',
    "run on each of these clusters in turn and print them side by side, a version a column (names 'cluster up --name' recorded, e.g. v40,rmq-bench)",
  ).argParser(clusterNames);

/** A context per cluster named (the command's own for its own cluster); the command's alone when none is named. */
export async function contextsFor(commandCtx: Context, names: readonly string[] | undefined): Promise<Context[]> {
  if (names === undefined) return [commandCtx];
  const { recordedClusterConfig } = await import('../config.js');
  const { createContext } = await import('../context.js');
  return names.map((name) =>
    name === commandCtx.config.clusterName ? commandCtx : createContext(recordedClusterConfig(commandCtx.config, name), commandCtx.progress, commandCtx.signal),
  );
}
