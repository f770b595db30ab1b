/**
 * docs/WORKSHOP.md's runnable parts: each ```sh block holds commands (lines starting with
 * `$ `), and the ```text block right after it holds their real output. The workshop test runs
 * the commands in order; scripts/workshop-outputs.mjs refreshes the output blocks. Pure.
 */

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
export function splitArgs(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(line); m !== null; m = re.exec(line)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}

export function parseWorkshop(markdown: string): WorkshopBlock[] {
  const lines = markdown.split('\n');
  const blocks: WorkshopBlock[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const heading = /^#{1,3}\s+(.*)$/.exec(l);
    if (heading) section = heading[1]!.trim();
    if (l.trim() !== '```sh') continue;
    const commands: WorkshopCommand[] = [];
    let j = i + 1;
    for (; j < lines.length && lines[j]!.trim() !== '```'; j++) {
      const m = /^\$\s+(?:npx\s+)?rmq-bench\s+(.*)$/.exec(lines[j]!.trim());
      if (m) commands.push({ line: j + 1, section, args: splitArgs(m[1]!) });
      else if (lines[j]!.trim().startsWith('$ ')) throw new Error(`docs/WORKSHOP.md line ${j + 1}: only rmq-bench commands can be run by the workshop test: ${lines[j]!.trim()}`);
    }
    let output: WorkshopBlock['output'];
    let k = j + 1;
    while (k < lines.length && lines[k]!.trim() === '') k++;
    if (k < lines.length && lines[k]!.trim() === '```text') {
      let e = k + 1;
      while (e < lines.length && lines[e]!.trim() !== '```') e++;
      output = { start: k + 1, end: e + 1 };
    }
    blocks.push({ section, commands, output });
    i = j;
  }
  return blocks;
}

/** Put new outputs into the ```text blocks (by block index), leaving everything else as it was. Pure. */
export function replaceOutputs(markdown: string, outputs: ReadonlyMap<number, string>): string {
  const lines = markdown.split('\n');
  const blocks = parseWorkshop(markdown);
  // From the end, so earlier line numbers stay valid.
  for (let b = blocks.length - 1; b >= 0; b--) {
    const text = outputs.get(b);
    const range = blocks[b]!.output;
    if (text === undefined || !range) continue;
    lines.splice(range.start, range.end - range.start - 1, ...text.replace(/\s+$/, '').split('\n'));
  }
  return lines.join('\n');
}
