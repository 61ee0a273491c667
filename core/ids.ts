import { createHash, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_PATTERN.test(value);

/** One workflow per memory; its id is derived from the memory id so a retry can never start a second. */
export const ingestWorkflowId = (memoryId: string): string => `memory-${memoryId}`;

/**
 * An append run: named by its starting message, and unique to the claim that made it (the memory
 * keeps it as its workflow id), since ingestion starts never run a completed id again
 * (services/orchestrator.ts): an append abandoned after its start failed must not hold the id the
 * next append at the same message needs.
 */
export const appendWorkflowId = (memoryId: string, fromMessage: number): string =>
  `memory-${memoryId}-append-${fromMessage}-${randomUUID().slice(0, 8)}`;

/** Graph projection into newly associated collections; several may follow one another. */
export const graphWorkflowId = (memoryId: string): string => `memory-${memoryId}-graph-${randomUUID()}`;

/** Deterministic chunk ids make re-running a stage overwrite instead of duplicating. */
export const chunkId = (memoryId: string, index: number): string => `${memoryId}:${index}`;

/** The memory of a chunk id (chunkId's inverse, first part). */
export const memoryOfChunk = (id: string): string => id.slice(0, id.lastIndexOf(':'));

/** The index of a chunk id within its memory (chunkId's inverse, second part). */
export const indexOfChunk = (id: string): number => Number(id.slice(id.lastIndexOf(':') + 1));

/** A UUID (version 5 layout) derived from a hash of the parts: the same parts always give the same id. */
export function deterministicUuid(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('\n')).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
