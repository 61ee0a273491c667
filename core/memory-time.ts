/**
 * When the things a memory holds happened. A client importing old chats or documents says so with a
 * `timestamp` per message and an `occurred_at` per memory; without them, the memory's creation is
 * the best we know. This is the ONE rule for "the time of a chunk or turn": ingestion stores it on
 * each chunk, and procedure traces, the graph and search read it from there (or call these helpers).
 */
import type { ChunkSource, MessageInput } from './content-model.js';

/** What the rule needs of a memory: its own time (optional) and its creation. */
export interface TimedMemory {
  occurred_at?: Date | null;
  created_at: Date;
}

/** The memory's own time: `occurred_at` when the client gave one, else when it was created. */
export const memoryTime = (memory: TimedMemory): Date => memory.occurred_at ?? memory.created_at;

/** The time of one turn: its message's timestamp, else the memory's occurred_at, else its creation. */
export const turnTime = (memory: TimedMemory, messageTimestamp?: Date | null): Date => messageTimestamp ?? memoryTime(memory);

/**
 * The time of a chunk: a message chunk takes its message's timestamp, every other chunk (and a
 * message without one) the memory's time.
 */
export function chunkTime(memory: TimedMemory & { content?: { messages?: MessageInput[] } }, source: ChunkSource): Date {
  const message =
    source.type === 'message' && source.message_index !== undefined ? memory.content?.messages?.[source.message_index] : undefined;
  return turnTime(memory, message?.timestamp);
}

/** The stored time of a chunk when it has one (chunks written before times existed do not). */
export const storedChunkTime = (chunk: { occurred_at?: Date | null }, memory: TimedMemory): Date => chunk.occurred_at ?? memoryTime(memory);
