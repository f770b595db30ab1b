import { readFile } from 'node:fs/promises';
import { DataError, NotFoundError } from '../../errors.js';
import { locateJsonError } from '../../util/json-locate.js';

/** The parts of a RabbitMQ definitions file rmq-bench reads. */
export interface Definitions {
  users: { name: string }[];
  vhosts: { name: string; default_queue_type?: string; metadata?: { default_queue_type?: string } }[];
  policies: { vhost: string; name: string; pattern: string; 'apply-to'?: string; priority?: number; definition: Record<string, unknown> }[];
  exchanges: { vhost: string; name: string; type: string }[];
  queues: { vhost: string; name: string; durable?: boolean; arguments?: Record<string, unknown> }[];
  bindings: { vhost: string; source: string; destination: string; destination_type: string; routing_key?: string }[];
}

function requireArray(obj: Record<string, unknown>, key: string, file: string): Record<string, unknown>[] {
  const v = obj[key];
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new DataError(`${file}: "${key}" must be an array`);
  v.forEach((item, i) => {
    if (typeof item !== 'object' || item === null) throw new DataError(`${file}: ${key}[${i}] must be an object`);
  });
  return v as Record<string, unknown>[];
}

function requireStrings(items: Record<string, unknown>[], key: string, fields: string[], file: string): void {
  items.forEach((item, i) => {
    for (const f of fields) {
      if (typeof item[f] !== 'string') throw new DataError(`${file}: ${key}[${i}].${f} must be a string`);
    }
  });
}

/** Parse and check a definitions document. Throws DataError with the place of the fault. */
export function parseDefinitions(text: string, file = 'definitions.json'): Definitions {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const fault = locateJsonError(text);
    throw new DataError(fault ? `${file} is not valid JSON at line ${fault.line}, column ${fault.column}: ${fault.reason}` : `${file} is not valid JSON`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new DataError(`${file}: the top level must be an object`);
  const obj = json as Record<string, unknown>;
  const users = requireArray(obj, 'users', file);
  const vhosts = requireArray(obj, 'vhosts', file);
  const policies = requireArray(obj, 'policies', file);
  const exchanges = requireArray(obj, 'exchanges', file);
  const queues = requireArray(obj, 'queues', file);
  const bindings = requireArray(obj, 'bindings', file);
  requireStrings(users, 'users', ['name'], file);
  requireStrings(vhosts, 'vhosts', ['name'], file);
  requireStrings(policies, 'policies', ['vhost', 'name', 'pattern'], file);
  requireStrings(exchanges, 'exchanges', ['vhost', 'name', 'type'], file);
  requireStrings(queues, 'queues', ['vhost', 'name'], file);
  requireStrings(bindings, 'bindings', ['vhost', 'source', 'destination', 'destination_type'], file);
  policies.forEach((p, i) => {
    if (typeof p.definition !== 'object' || p.definition === null) throw new DataError(`${file}: policies[${i}].definition must be an object`);
    try {
      new RegExp(p.pattern as string);
    } catch {
      throw new DataError(`${file}: policies[${i}].pattern is not a valid regular expression`);
    }
  });
  return { users, vhosts, policies, exchanges, queues, bindings } as unknown as Definitions;
}

export async function loadDefinitions(file: string): Promise<Definitions> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new NotFoundError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return parseDefinitions(text, file);
}

/** The quorum queues a definitions file declares (explicitly, or through its vhost's default type). */
export function quorumQueues(defs: Definitions): { vhost: string; name: string }[] {
  const defaultType = (vhost: string): string | undefined => {
    const v = defs.vhosts.find((x) => x.name === vhost);
    return v?.default_queue_type ?? v?.metadata?.default_queue_type;
  };
  return defs.queues
    .filter((q) => {
      const t = q.arguments?.['x-queue-type'];
      return t === 'quorum' || (t === undefined && defaultType(q.vhost) === 'quorum');
    })
    .map((q) => ({ vhost: q.vhost, name: q.name }));
}
