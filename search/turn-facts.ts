/**
 * Per collection partition, what the turn ranking (search/turn-ranking.ts) needs to know of each
 * chunk besides its vector and terms: whether it asks, the kinds of answer it can give, the dates it
 * speaks of, and who speaks it.
 * Kept beside the vector and lexical partitions, by the same upserts and removals, and counted in
 * the partition budget (`bytes`).
 */
import { turnAnswerKinds } from './turn-answers.js';
import { turnDates } from './turn-dates.js';
import { detachedString } from './tokenize.js';
import { turnSpeaker, withoutSpeaker } from './turn-speakers.js';

export interface TurnFact {
  question: boolean;
  /** The kinds of answer its text can give (search/turn-answers.ts ANSWER_* bits). */
  answers: number;
  /** Milliseconds since the epoch: compact, and compared as numbers. */
  dates: Float64Array;
  /** Lower-cased speaker name (search/turn-speakers.ts); the string is shared with the partition's count key. */
  speaker: string | undefined;
}

interface TurnPartition {
  facts: Map<string, TurnFact>;
  /** Per speaker, its turns and the one copy of its name the facts share. */
  speakers: Map<string, { name: string; turns: number }>;
  /** Bytes of the dates' typed arrays. */
  dateBytes: number;
  /** Which chunks each memory has here, so a dropped partition leaves no chunk ids behind. */
  chunksOfMemory: Map<string, Set<string>>;
}

/**
 * Estimated bytes per chunk beyond its dates' typed array: the map entry, the chunk id string (a
 * second copy of the vector partition's), the record and its typed array's header. On the high
 * side, like the search index's other estimates.
 */
const BYTES_PER_TURN_FACT = 320;
/** A name must head at least this many turns to count as a speaker of the collection. */
const MIN_SPEAKER_TURNS = 2;

const NO_DATES: readonly Date[] = [];

export class TurnFacts {
  private readonly partitions = new Map<string, TurnPartition>();

  createPartition(collectionId: string): void {
    this.partitions.set(collectionId, { facts: new Map(), speakers: new Map(), dateBytes: 0, chunksOfMemory: new Map() });
  }

  /** What the partition knows of a chunk (for persisting it), if it holds the chunk. */
  factOf(collectionId: string, chunkId: string): TurnFact | undefined {
    return this.partitions.get(collectionId)?.facts.get(chunkId);
  }

  /**
   * Records a chunk's facts, computed from its text (upsert) or before (a persisted partition,
   * search/partition-snapshot.ts), replacing what the partition held for it.
   */
  put(collectionId: string, chunkId: string, memoryId: string, fact: TurnFact): void {
    const partition = this.partitions.get(collectionId);
    if (!partition) return;
    this.removeChunk(partition, chunkId);
    let speaker = fact.speaker;
    if (speaker !== undefined) {
      let entry = partition.speakers.get(speaker);
      // One copy of the name per speaker, owning its characters (never a view into a chunk's text).
      if (!entry) partition.speakers.set(speaker, (entry = { name: detachedString(speaker), turns: 0 }));
      entry.turns += 1;
      speaker = entry.name;
    }
    partition.facts.set(chunkId, { question: fact.question, answers: fact.answers, dates: fact.dates, speaker });
    partition.dateBytes += fact.dates.byteLength;
    let chunks = partition.chunksOfMemory.get(memoryId);
    if (!chunks) partition.chunksOfMemory.set(memoryId, (chunks = new Set()));
    chunks.add(chunkId);
  }

  dropPartition(collectionId: string): void {
    this.partitions.delete(collectionId);
  }

  upsert(collectionId: string, chunkId: string, memoryId: string, text: string, time: Date | null | undefined): void {
    const partition = this.partitions.get(collectionId);
    if (!partition) return;
    const dates = time ? turnDates(text, time) : NO_DATES;
    this.put(collectionId, chunkId, memoryId, {
      question: text.trimEnd().endsWith('?'),
      // Without the speaker's name: a speaker called June would otherwise mention a time in every turn.
      answers: turnAnswerKinds(withoutSpeaker(text)),
      dates: Float64Array.from(dates, (date) => date.getTime()),
      speaker: turnSpeaker(text),
    });
  }

  private removeChunk(partition: TurnPartition, chunkId: string): void {
    const fact = partition.facts.get(chunkId);
    if (!fact) return;
    partition.facts.delete(chunkId);
    partition.dateBytes -= fact.dates.byteLength;
    if (fact.speaker === undefined) return;
    const entry = partition.speakers.get(fact.speaker);
    if (entry && --entry.turns <= 0) partition.speakers.delete(fact.speaker);
  }

  removeMemory(memoryId: string): void {
    for (const partition of this.partitions.values()) {
      const chunks = partition.chunksOfMemory.get(memoryId);
      if (!chunks) continue;
      for (const chunkId of chunks) this.removeChunk(partition, chunkId);
      partition.chunksOfMemory.delete(memoryId);
    }
  }

  /** Estimated bytes of the collection's turn facts (search/partition-sizes.ts partitionBytes). */
  bytes(collectionId: string): number {
    const partition = this.partitions.get(collectionId);
    return partition ? partition.facts.size * BYTES_PER_TURN_FACT + partition.dateBytes : 0;
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

  answersOf(collectionIds: readonly string[], chunkId: string): number {
    return this.find(collectionIds, chunkId)?.answers ?? 0;
  }

  speakerOf(collectionIds: readonly string[], chunkId: string): string | undefined {
    return this.find(collectionIds, chunkId)?.speaker;
  }

  /** The speakers of these collections: names heading at least MIN_SPEAKER_TURNS turns of one of them. */
  speakers(collectionIds: readonly string[]): Set<string> {
    const found = new Set<string>();
    for (const collectionId of collectionIds)
      for (const [speaker, { turns }] of this.partitions.get(collectionId)?.speakers ?? [])
        if (turns >= MIN_SPEAKER_TURNS) found.add(speaker);
    return found;
  }
}
