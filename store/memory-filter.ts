import type { Filter } from 'mongodb';
import type { MemoryFilter } from '../core/memory-filter.js';
import type { MemoryDoc } from './memory-rows.js';

/**
 * The one translation of a MemoryFilter into a MongoDB query on `memories`. Conditions on the same
 * field share one operator object (`{$gt: 1, $lt: 5}`), so every condition holds.
 */
export function memoryQuery(filter: MemoryFilter): Filter<MemoryDoc> {
  const query: Record<string, Record<string, unknown>> = {};
  const on = (field: string, operator: string, value: unknown) => {
    query[field] = { ...query[field], [operator]: value };
  };
  for (const condition of filter.metadata) {
    const field = ['metadata', ...condition.path].join('.');
    on(field, `$${condition.op}`, 'values' in condition ? condition.values : condition.value);
  }
  if (filter.kind) on('kind', '$eq', filter.kind);
  if (filter.createdAfter) on('created_at', '$gte', filter.createdAfter);
  if (filter.createdBefore) on('created_at', '$lt', filter.createdBefore);
  return query as Filter<MemoryDoc>;
}
