import type { Memory } from '../../../core/memory-model.js';

let counter = 0;

/** A complete document memory of `tenant_id` in `collection_ids`, with `overrides` on top: a row to seed a fake with. */
export function memoryRecord(overrides: Partial<Memory> & Pick<Memory, 'tenant_id' | 'collection_ids'>): Memory {
  counter += 1;
  const id = overrides.id ?? `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`;
  const created = new Date(Date.UTC(2026, 0, 1, 0, 0, counter));
  return {
    id,
    kind: 'document',
    name: null,
    metadata: {},
    content: { raw_text: 'some text' },
    status: 'complete',
    status_message: null,
    chunk_count: 1,
    indexed_chunk_count: 1,
    embedding_model: 'fake-model',
    workflow_id: `memory-${id}`,
    created_at: created,
    updated_at: created,
    completed_at: created,
    ...overrides,
  };
}
