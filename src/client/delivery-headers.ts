/** Reading a delivery's headers as amqplib decodes them: x-delivery-count, x-acquired-count, x-death. */

/** A numeric header as amqplib decodes it (a number, a bigint, or a typed { value }). Pure. */
export function numberHeader(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'object' && v !== null && 'value' in v && typeof (v as { value: unknown }).value === 'number') return (v as { value: number }).value;
  return undefined;
}

/** The first x-death entry in words. Pure. */
export function deathSummary(headers: Record<string, unknown> | undefined): string | undefined {
  const deaths = headers?.['x-death'];
  if (!Array.isArray(deaths) || deaths.length === 0) return undefined;
  const d = deaths[0] as Record<string, unknown>;
  return `${String(d.reason ?? '?')} from ${String(d.queue ?? '?')} ×${numberHeader(d.count) ?? '?'}`;
}
