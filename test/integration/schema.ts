import { Ajv } from 'ajv';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Every --json document a test parses is held to the package's JSON Schema
 * (schema/documents.schema.json, generated from the types by scripts/build-schema.mjs): a field
 * the schema does not know, a missing one or a wrong type fails the test that printed it.
 */
const schema = JSON.parse(readFileSync(path.join(ROOT, 'schema', 'documents.schema.json'), 'utf8')) as { $id: string };
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addSchema(schema);
const validators = new Map<string, ReturnType<Ajv['compile']>>();

/** The document itself, once it is valid against its kind's schema; otherwise an error naming each violation. */
export function schemaChecked<T>(doc: T): T {
  const kind = (doc as { kind?: unknown }).kind;
  if (typeof kind !== 'string') throw new Error(`a --json document without a kind: ${JSON.stringify(doc).slice(0, 200)}`);
  let validate = validators.get(kind);
  if (validate === undefined) {
    const ref = `${schema.$id}#/definitions/Documents/properties/${kind}`;
    const found = ajv.getSchema(ref);
    if (found === undefined) throw new Error(`the schema has no document of kind '${kind}'`);
    validate = found;
    validators.set(kind, validate);
  }
  if (!validate(doc)) {
    const errors = (validate.errors ?? []).slice(0, 10).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
    throw new Error(`the '${kind}' document does not match schema/documents.schema.json:\n${errors.join('\n')}`);
  }
  return doc;
}
