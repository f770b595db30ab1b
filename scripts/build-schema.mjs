#!/usr/bin/env node
// The JSON Schema of every --json document: schema/documents.schema.json, generated from the
// types in src/report/schema/documents.ts (ts-json-schema-generator), shipped in the package.
//   node scripts/build-schema.mjs          write it
//   node scripts/build-schema.mjs --check  exit 1 when the file differs from what the types give
// Its root is an object with one property per kind; a document of kind K is valid against
// `documents.schema.json#/properties/K` (test/integration/cli.ts checks every document it parses).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGenerator } from 'ts-json-schema-generator';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'schema', 'documents.schema.json');

export function generate() {
  const schema = createGenerator({
    path: path.join(ROOT, 'src/report/schema/documents.ts'),
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    type: 'Documents',
    skipTypeCheck: true,
    additionalProperties: false,
    // Every type inlined: two interfaces of the code may share a name (Check), which named
    // definitions cannot hold.
    expose: 'none',
  }).createSchema('Documents');
  return {
    $id: 'https://github.com/rmq-bench/rmq-bench/schema/documents.schema.json',
    title: 'rmq-bench --json documents, by kind',
    ...schema,
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = `${JSON.stringify(generate(), null, 2)}\n`;
  if (process.argv.includes('--check')) {
    if (readFileSync(OUT, 'utf8') !== text) {
      console.error('build-schema: schema/documents.schema.json is not what the types give: run node scripts/build-schema.mjs');
      process.exit(1);
    }
  } else writeFileSync(OUT, text);
}
