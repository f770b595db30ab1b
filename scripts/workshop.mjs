/**
 * docs/WORKSHOP.md's runnable parts: each ```sh block holds commands (lines starting with
 * `$ `), and the ```text block right after it holds their real output. The workshop test runs
 * the commands in order; scripts/workshop-outputs.mjs refreshes the output blocks. Pure.
 * Docs tooling, not part of the CLI: plain JavaScript (types in workshop.d.mts), so the
 * script runs without a build and nothing of it lands in dist/.
 */

/**
 * Split a command line the way a POSIX shell would for the simple cases the walkthrough uses: spaces and single or double quotes.
 * @param {string} line
 * @returns {string[]}
 */
export function splitArgs(line) {
  const out = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(line); m !== null; m = re.exec(line)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/**
 * The lines of a fenced block as a shell reads them: a line ending in a backslash goes on with the
 * next one (the walkthrough splits a long command so that it fits 120 columns). Pure.
 * @param {readonly string[]} lines
 * @param {number} firstLine 1-based line number of lines[0]
 * @returns {{ line: number, text: string }[]} each logical line, trimmed, with the number of its first line
 */
export function joinContinuations(lines, firstLine) {
  const out = [];
  let current;
  for (const [i, raw] of lines.entries()) {
    const t = raw.trim();
    const open = t.endsWith('\\');
    const piece = open ? t.slice(0, -1).trimEnd() : t;
    if (current) current.text = `${current.text} ${piece}`;
    else current = { line: firstLine + i, text: piece };
    if (!open) {
      out.push(current);
      current = undefined;
    }
  }
  if (current) out.push(current);
  return out;
}

/**
 * @param {string} markdown
 * @returns {import('./workshop.d.mts').WorkshopBlock[]}
 */
export function parseWorkshop(markdown) {
  const lines = markdown.split('\n');
  const blocks = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const heading = /^#{1,3}\s+(.*)$/.exec(l);
    if (heading) section = heading[1].trim();
    if (l.trim() !== '```sh') continue;
    const commands = [];
    let j = i + 1;
    while (j < lines.length && lines[j].trim() !== '```') j++;
    for (const l of joinContinuations(lines.slice(i + 1, j), i + 2)) {
      const m = /^\$\s+(?:npx\s+)?rmq-bench\s+(.*)$/.exec(l.text);
      if (m) commands.push({ line: l.line, section, args: splitArgs(m[1]) });
      else if (l.text.startsWith('$ ')) throw new Error(`docs/WORKSHOP.md line ${l.line}: only rmq-bench commands can be run by the workshop test: ${l.text}`);
    }
    let output;
    let k = j + 1;
    while (k < lines.length && lines[k].trim() === '') k++;
    if (k < lines.length && lines[k].trim() === '```text') {
      let e = k + 1;
      while (e < lines.length && lines[e].trim() !== '```') e++;
      output = { start: k + 1, end: e + 1 };
    }
    blocks.push({ section, commands, output });
    i = j;
  }
  return blocks;
}

/**
 * Put new outputs into the ```text blocks (by block index), leaving everything else as it was. Pure.
 * @param {string} markdown
 * @param {ReadonlyMap<number, string>} outputs
 * @returns {string}
 */
export function replaceOutputs(markdown, outputs) {
  const lines = markdown.split('\n');
  const blocks = parseWorkshop(markdown);
  // From the end, so earlier line numbers stay valid.
  for (let b = blocks.length - 1; b >= 0; b--) {
    const text = outputs.get(b);
    const range = blocks[b].output;
    if (text === undefined || !range) continue;
    lines.splice(range.start, range.end - range.start - 1, ...text.replace(/\s+$/, '').split('\n'));
  }
  return lines.join('\n');
}
