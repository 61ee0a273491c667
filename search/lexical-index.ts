/**
 * In-memory BM25 keyword search over chunks, partitioned by collection like VectorIndex and kept
 * current by the same change feed (upsert / removeMemory). It exists because MongoDB `$text` is
 * not available everywhere we run. Each collection's partition, its layout and its scoring are
 * search/lexical-partition.ts; this is the index over them.
 */
import { tokenize } from './tokenize.js';
import { PartitionedIndex } from './partitioned-index.js';
import { LexicalPartition, ScoreScratch, type LexicalHit, type LexicalQueryStats, type QueryTermMatch } from './lexical-partition.js';

function compareHits(a: LexicalHit, b: LexicalHit): number {
  if (a.score !== b.score) return b.score - a.score;
  return a.chunkId < b.chunkId ? -1 : a.chunkId > b.chunkId ? 1 : 0;
}

export class LexicalIndex extends PartitionedIndex<LexicalPartition> {
  private readonly scratch = new ScoreScratch();

  createPartition(collectionId: string): LexicalPartition {
    const partition = new LexicalPartition();
    this.partitions.set(collectionId, partition);
    return partition;
  }

  /** Puts a partition built elsewhere (LexicalPartition.fromState) in place of the collection's. */
  setPartition(collectionId: string, partition: LexicalPartition): void {
    this.partitions.set(collectionId, partition);
  }

  /**
   * BM25 (k1 = 1.2, b = 0.75, Lucene-style non-negative IDF) top-k over the named partitions,
   * each scored with its own statistics; a chunk present in several partitions is returned once
   * with its best score.
   */
  search(query: string, collectionIds: string[], k: number): { hits: LexicalHit[]; stats: LexicalQueryStats } {
    const terms = [...new Set(tokenize(query))];
    const matched = terms.map(() => false);
    let maxRarity = 0;
    const best = new Map<string, LexicalHit>();
    const limit = Math.max(0, Math.floor(k));
    if (terms.length > 0) {
      for (const partition of this.partitionsOf(collectionIds)) {
        const result = partition.collectTop(terms, limit, this.scratch, matched);
        if (result.maxRarity > maxRarity) maxRarity = result.maxRarity;
        for (const hit of result.hits) {
          const seen = best.get(hit.chunkId);
          if (!seen || hit.score > seen.score) best.set(hit.chunkId, hit);
        }
      }
    }
    const hits = [...best.values()].sort(compareHits).slice(0, limit);
    return { hits, stats: { terms, matchedTerms: matched.filter(Boolean).length, maxRarity } };
  }

  /**
   * Which of the query's terms (tokenize, deduped, as `search` takes them) each of these chunks
   * holds, with the terms' IDF in the chunk's partition (search/turn-ranking.ts follow-ups).
   */
  queryTermMatches(query: string, collectionIds: string[], chunkIds: readonly string[]): Map<string, QueryTermMatch> {
    const terms = [...new Set(tokenize(query))];
    const matches = new Map<string, QueryTermMatch>();
    if (terms.length === 0 || chunkIds.length === 0) return matches;
    for (const partition of this.partitionsOf(collectionIds)) {
      partition.termMatches(
        terms,
        chunkIds.filter((chunkId) => !matches.has(chunkId)),
        this.scratch,
        matches,
      );
    }
    return matches;
  }
}
