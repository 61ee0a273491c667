import { randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_PATTERN.test(value);

/** One workflow per memory; its id is derived from the memory id so a retry can never start a second. */
export const ingestWorkflowId = (memoryId: string): string => `memory-${memoryId}`;

/** Deterministic chunk ids make re-running a stage overwrite instead of duplicating. */
export const chunkId = (memoryId: string, index: number): string => `${memoryId}:${index}`;
