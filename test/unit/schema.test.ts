import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { KINDS } from '../../src/report/kinds.js';
import { ERROR_KIND } from '../../src/report/json.js';
// @ts-expect-error: a script of the repository, plain JavaScript without types
import { generate } from '../../scripts/build-schema.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FILE = path.join(ROOT, 'schema', 'documents.schema.json');

// Compiling the whole schema (about 0.5 MB: every type inlined) takes ajv a second or more, several
// on a loaded machine: hence the file's timeout.
describe('schema/documents.schema.json', { timeout: 60_000 }, () => {
  it('is what the types give (node scripts/build-schema.mjs writes it again)', () => {
    expect(readFileSync(FILE, 'utf8'), 'run node scripts/build-schema.mjs').toBe(`${JSON.stringify(generate(), null, 2)}\n`);
  });

  it('has a document for every kind of the registry and the error document', () => {
    const schema = JSON.parse(readFileSync(FILE, 'utf8')) as { definitions: { Documents: { properties: Record<string, unknown> } } };
    expect(Object.keys(schema.definitions.Documents.properties).sort()).toEqual([...KINDS, ERROR_KIND].sort());
  });

  const schema = JSON.parse(readFileSync(FILE, 'utf8')) as { $id: string };
  const ajv = new Ajv({ strict: false });
  ajv.addSchema(schema);
  const of = (kind: string) => ajv.getSchema(`${schema.$id}#/definitions/Documents/properties/${kind}`)!;
  const cases: { name: string; kind: string; doc: unknown; valid: boolean }[] = [
    {
      name: 'an error document',
      kind: 'error',
      doc: { schemaVersion: 1, kind: 'error', broker: null, exitCode: 68, message: 'no broker at amqp://…', hint: null },
      valid: true,
    },
    {
      name: 'an error document without its exit code',
      kind: 'error',
      doc: { schemaVersion: 1, kind: 'error', broker: null, message: 'x', hint: null },
      valid: false,
    },
    {
      name: 'a field the schema does not know',
      kind: 'error',
      doc: { schemaVersion: 1, kind: 'error', broker: null, exitCode: 2, message: 'x', hint: null, extra: 1 },
      valid: false,
    },
    {
      name: 'another kind under the error schema',
      kind: 'error',
      doc: { schemaVersion: 1, kind: 'compare', broker: null, exitCode: 2, message: 'x', hint: null },
      valid: false,
    },
    {
      name: 'a schema version the package does not write',
      kind: 'error',
      doc: { schemaVersion: 2, kind: 'error', broker: null, exitCode: 2, message: 'x', hint: null },
      valid: false,
    },
  ];
  it.each(cases)('$name: valid $valid', ({ kind, doc, valid }) => {
    expect(of(kind)(doc)).toBe(valid);
  });
});
