/**
 * Per collection partition, what the turn ranking (search/turn-ranking.ts) needs to know of each
 * chunk besides its vector and terms: whether it asks, and the dates it speaks of. Kept beside
 * the vector and lexical partitions, by the same upserts and removals.
 */
import { turnDates } from './turn-dates.js';

interface TurnFact {
  question: boolean;
  /** Milliseconds since the epoch: compact, and compared as numbers. */
  dates: Float64Array;
}

const NO_DATES: readonly Date[] = [];

/** One collection's turn facts, and which chunks each memory has there (so a drop forgets them too). */
export class TurnPartition {
  readonly facts = new Map<string, TurnFact>();
  private readonly chunksOfMemory = new Map<string, Set<string>>();

  upsert(chunkId: string, memoryId: string, text: string, time: Date | null | undefined): void {
    const dates = time ? turnDates(text, time) : [];
    this.facts.set(chunkId, { question: text.trimEnd().endsWith('?'), dates: Float64Array.from(dates, (date) => date.getTime()) });
    let chunks = this.chunksOfMemory.get(memoryId);
    if (!chunks) this.chunksOfMemory.set(memoryId, (chunks = new Set()));
    chunks.add(chunkId);
  }

  removeMemory(memoryId: string): void {
    const chunks = this.chunksOfMemory.get(memoryId);
    if (!chunks) return;
    for (const chunkId of chunks) this.facts.delete(chunkId);
    this.chunksOfMemory.delete(memoryId);
  }
}

export class TurnFacts {
  private readonly partitions = new Map<string, TurnPartition>();

  createPartition(collectionId: string): TurnPartition {
    const partition = new TurnPartition();
    this.partitions.set(collectionId, partition);
    return partition;
  }

  dropPartition(collectionId: string): void {
    this.partitions.delete(collectionId);
  }

  upsert(collectionId: string, chunkId: string, memoryId: string, text: string, time: Date | null | undefined): void {
    this.partitions.get(collectionId)?.upsert(chunkId, memoryId, text, time);
  }

  removeMemory(memoryId: string): void {
    for (const partition of this.partitions.values()) partition.removeMemory(memoryId);
  }

  private find(collectionIds: readonly string[], chunkId: string): TurnFact | undefined {
    for (const collectionId of collectionIds) {
      const fact = this.partitions.get(collectionId)?.facts.get(chunkId);
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
