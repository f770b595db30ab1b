#!/usr/bin/env node
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// dist/ is compiled from src/ (npm run build; npm ci runs it through `prepare`). Without it, one
// line instead of Node's ERR_MODULE_NOT_FOUND stack, and exit 69 (ExitCode.unavailable: the
// environment lacks something).
const entry = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(entry)) {
  const { main } = await import(entry.href);
  await main(process.argv);
} else {
  process.stderr.write(`rmq-bench: not built: run 'npm run build' (or npm ci) in ${path.dirname(path.dirname(fileURLToPath(import.meta.url)))}\n`);
  process.exitCode = 69;
}
