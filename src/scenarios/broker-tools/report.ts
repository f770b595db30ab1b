import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { NotFoundError, UsageError } from '../../errors.js';

/**
 * `rmq-bench report`'s inputs: each argument a file, or a folder meaning every *.json file in it
 * (not recursive), by name. Reads them and returns their texts (or why one could not be read);
 * src/report/combined.ts makes the entries and the page. Never prints.
 */

/** One input as read: its text, or why it could not be read. */
export type ReportInput = { readonly file: string; readonly text: string } | { readonly file: string; readonly readError: string };

export interface CollectedInputs {
  readonly inputs: ReportInput[];
  /** For people: a folder without any *.json file. */
  readonly notes: string[];
}

const errCode = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));

/** The files the arguments name, in order: a folder's *.json files sorted by name; each file once. */
export async function listReportFiles(args: readonly string[], output: string): Promise<{ files: string[]; notes: string[] }> {
  const files: string[] = [];
  const notes: string[] = [];
  const seen = new Set<string>();
  const outputPath = path.resolve(output);
  const add = (file: string): void => {
    const resolved = path.resolve(file);
    if (resolved === outputPath) throw new UsageError(`the output ${output} is also one of the inputs`);
    if (seen.has(resolved)) return;
    seen.add(resolved);
    files.push(file);
  };
  for (const arg of args) {
    let isDir: boolean;
    try {
      isDir = (await stat(arg)).isDirectory();
    } catch (err) {
      if (errCode(err) === 'ENOENT' || errCode(err) === 'ENOTDIR') throw new NotFoundError(`no such file or folder: ${arg}`);
      // There but not stat-able (EACCES): listed as unreadable, like a file that cannot be read.
      add(arg);
      continue;
    }
    if (!isDir) {
      add(arg);
      continue;
    }
    let names: string[];
    try {
      names = (await readdir(arg, { withFileTypes: true })).filter((d) => !d.isDirectory() && d.name.toLowerCase().endsWith('.json')).map((d) => d.name);
    } catch (err) {
      throw new NotFoundError(`cannot list the folder ${arg}: ${errCode(err)}`);
    }
    names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    if (names.length === 0) notes.push(`${arg}: no *.json file in this folder`);
    for (const name of names) add(path.join(arg, name));
  }
  if (files.length === 0) throw new NotFoundError(`no *.json file in ${args.join(', ')}: nothing to report`);
  return { files, notes };
}

/** Every input's text, or why it could not be read (listed as unreadable, never skipped). */
export async function collectReportInputs(args: readonly string[], output: string): Promise<CollectedInputs> {
  const { files, notes } = await listReportFiles(args, output);
  const inputs = await Promise.all(
    files.map(async (file): Promise<ReportInput> => {
      try {
        return { file, text: await readFile(file, 'utf8') };
      } catch (err) {
        return { file, readError: `cannot read it: ${errCode(err)}` };
      }
    }),
  );
  return { inputs, notes };
}
