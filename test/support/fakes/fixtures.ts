import assert from 'node:assert/strict';
import { AppError } from '../../../core/errors.js';
import type { Memory } from '../../../core/memory-model.js';
import type { EventStreamOptions } from '../../../services/event-stream.js';

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

/** Rejects with an AppError of this status and stable code, naming `field` when given: how a service refuses. */
export async function rejectsWith(promise: Promise<unknown>, status: number, code: string, field?: string): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.status, status);
    if (field !== undefined) assert.equal(error.details?.[0]?.field, field, `details: ${JSON.stringify(error.details)}`);
    return error;
  }
  assert.fail(`expected ${status} ${code}, but it succeeded`);
}

/**
 * Event-stream options for unit tests: small buffers and session limits, a generous inbound rate;
 * `overrides` replaces whole fields (a test about one limit states only that one).
 */
export const streamOptions = (overrides: Partial<EventStreamOptions> = {}): EventStreamOptions => ({
  maxFrameBytes: 64 * 1024,
  softBufferBytes: 64 * 1024,
  hardBufferBytes: 256 * 1024,
  maxPauseMs: 60_000,
  sessionLimits: { perKey: 10, perTenant: 10, perProcess: 10 },
  revocationCheckMs: 60_000,
  inbound: { framesPerSecond: 20, burst: 40, maxQueued: 16 },
  ...overrides,
});
