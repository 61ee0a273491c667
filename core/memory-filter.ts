/**
 * The filters of memory list and search, as the service understands them: a small language that
 * names no database. The API schema parses the wire's `metadata_filters` into it; the data layer
 * (store/memory-filter.ts) is the one place that turns it into a query.
 */
import type { MemoryKind } from './content-model.js';

export type FilterScalar = string | number | boolean | null;

/** Operators of one metadata condition; on the wire each is spelled with a leading `$`. */
export const COMPARISONS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'] as const;
export const MEMBERSHIPS = ['in', 'nin'] as const;
export const METADATA_OPERATORS = [...COMPARISONS, ...MEMBERSHIPS, 'exists'] as const;
export type MetadataOperator = (typeof METADATA_OPERATORS)[number];

/** One condition on a metadata field; `path` is the field's dotted path below `metadata`, split. */
export type MetadataCondition =
  | { path: string[]; op: (typeof COMPARISONS)[number]; value: FilterScalar }
  | { path: string[]; op: (typeof MEMBERSHIPS)[number]; values: FilterScalar[] }
  | { path: string[]; op: 'exists'; value: boolean };

/** Every condition must hold (and); an empty filter matches every memory. */
export interface MemoryFilter {
  metadata: MetadataCondition[];
  kind?: MemoryKind;
  /** created_at >= createdAfter */
  createdAfter?: Date;
  /** created_at < createdBefore */
  createdBefore?: Date;
}

export const NO_FILTER: MemoryFilter = { metadata: [] };

export const isEmptyFilter = (filter: MemoryFilter): boolean =>
  filter.metadata.length === 0 && !filter.kind && !filter.createdAfter && !filter.createdBefore;
