/**
 * Per collection partition, what the turn ranking (search/turn-ranking.ts) needs to know of each
 * chunk besides its vector and terms: whether it asks, and the dates it speaks of. Kept beside
 * the vector and lexical partitions, by the same upserts and removals.
 */
import { turnDates } from './turn-dates.js';

export interface TurnFact {
  question: boolean;
  /** Milliseconds since the epoch: compact, and compared as numbers. */
  dates: Float64Array;
}

const NO_DATES: readonly Date[] = [];

export class TurnFacts {
  private readonly partitions = new Map<string, Map<string, TurnFact>>();
  private readonly chunksOfMemory = new Map<string, Set<string>>();

  createPartition(collectionId: string): void {
    this.partitions.set(collectionId, new Map());
  }

  /** What the partition knows of a chunk (for persisting it), if it holds the chunk. */
  factOf(collectionId: string, chunkId: string): TurnFact | undefined {
    return this.partitions.get(collectionId)?.get(chunkId);
  }

  /** Records a chunk's facts as computed before (a persisted partition), without reading its text. */
  put(collectionId: string, chunkId: string, memoryId: string, fact: TurnFact): void {
    const partition = this.partitions.get(collectionId);
    if (!partition) return;
    partition.set(chunkId, fact);
    let chunks = this.chunksOfMemory.get(memoryId);
    if (!chunks) this.chunksOfMemory.set(memoryId, (chunks = new Set()));
    chunks.add(chunkId);
  }

  dropPartition(collectionId: string): void {
    this.partitions.delete(collectionId);
  }

  upsert(collectionId: string, chunkId: string, memoryId: string, text: string, time: Date | null | undefined): void {
    const partition = this.partitions.get(collectionId);
    if (!partition) return;
    const dates = time ? turnDates(text, time) : [];
    this.put(collectionId, chunkId, memoryId, {
      question: text.trimEnd().endsWith('?'),
      dates: Float64Array.from(dates, (date) => date.getTime()),
    });
  }

  removeMemory(memoryId: string): void {
    const chunks = this.chunksOfMemory.get(memoryId);
    if (!chunks) return;
    for (const partition of this.partitions.values()) for (const chunkId of chunks) partition.delete(chunkId);
    this.chunksOfMemory.delete(memoryId);
  }

  private find(collectionIds: readonly string[], chunkId: string): TurnFact | undefined {
    for (const collectionId of collectionIds) {
      const fact = this.partitions.get(collectionId)?.get(chunkId);
      if (fact) return fact;
    }
    return undefined;
  }

  isQuestion(collectionIds: readonly string[], chunkId: string): boolean {
    return this.find(collectionIds, chunkId)?.question ?? false;
  }

  datesOf(collectionIds: readonly string[], chunkId: string): readonly Date[] {
    const fact = this.find(collectionIds, chunkId);
    return fact ? Array.from(fact.dates, (ms) => new Date(ms)) : NO_DATES;
  }
}
