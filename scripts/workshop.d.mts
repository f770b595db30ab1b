/** Types of scripts/workshop.mjs (docs/WORKSHOP.md's runnable parts), for the TypeScript tests. */

export interface WorkshopCommand {
  /** 1-based line of the command in the file. */
  line: number;
  /** The section heading it is under. */
  section: string;
  /** argv after `rmq-bench` (npx rmq-bench … / rmq-bench …). */
  args: string[];
}

export interface WorkshopBlock {
  section: string;
  commands: WorkshopCommand[];
  /** Line range of the ```text block after it (the fences included), if any. */
  output: { start: number; end: number } | undefined;
}

/** Split a command line the way a POSIX shell would for the simple cases the walkthrough uses: spaces and single or double quotes. */
export function splitArgs(line: string): string[];

/** The lines of a fenced block as a shell reads them: a line ending in a backslash goes on with the next one. Each logical line trimmed, with the 1-based number of its first line (firstLine: that of lines[0]). */
export function joinContinuations(lines: readonly string[], firstLine: number): { line: number; text: string }[];

export function parseWorkshop(markdown: string): WorkshopBlock[];

/** Put new outputs into the ```text blocks (by block index), leaving everything else as it was. Pure. */
export function replaceOutputs(markdown: string, outputs: ReadonlyMap<number, string>): string;
