/**
 * How a search process follows the index-change feed (issue 26, item 8): it reads only what its
 * loaded partitions need, a gap or a bulk change makes it read partitions again lazily (on their
 * next search, within the budget), and a dropped collection leaves nothing behind, even in a
 * partition a search holds. The store is a fake that counts what is read.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { createLogger } from '../core/logger.js';
import { vectorToBinary } from '../store/chunks.js';
import type { GraphEntity, GraphMention } from '../store/graph.js';
import type { StoredIndexSnapshot } from '../store/index-snapshots.js';
import { seededRandom } from '../core/random.js';
import type { IndexNotice } from './feed-follower.js';
import { IndexBudgetError, SearchIndex, type SearchIndexStore } from './search-index.js';

const MODEL = 'test-model';
const DIMENSIONS = 4;

interface FakeChunk {
  memoryId: string;
  collectionIds: string[];
  text: string;
  vector: Float32Array;
}

type ChangeInput = Pick<IndexNotice, 'op'> & Partial<Pick<IndexNotice, 'memory_id' | 'collection_ids' | 'collection_id' | 'target_ids'>>;

async function* iterate<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

/** A store of chunks (no graph) and a feed, counting every read a follower makes. */
class FakeStore implements SearchIndexStore {
  feed: IndexNotice[] = [];
  private seq = 0;
  chunkRows: FakeChunk[] = [];
  /** Memory ids passed to each per-memory read (chunks and graph provenance). */
  memoryReads: string[][] = [];
  /** Collections read whole (a partition load). */
  collectionReads: string[] = [];

  indexChanges: SearchIndexStore['indexChanges'] = {
    log: {
      latestSeq: () => Promise.resolve(this.seq),
      readAfter: (after: number, limit: number, filter: Partial<Pick<IndexNotice, 'op'>> = {}) =>
        Promise.resolve(this.feed.filter((change) => change.seq > after && (!filter.op || change.op === filter.op)).slice(0, limit)),
    },
  };

  chunks: SearchIndexStore['chunks'] = {
    tenantOfCollection: () => Promise.resolve('t'),
    // Only a load from a persisted snapshot counts; these tests persist none.
    countForCollection: (collectionId) =>
      Promise.resolve(this.chunkRows.filter((chunk) => chunk.collectionIds.includes(collectionId)).length),
    vectorsForCollection: (collectionId, _model, part = { index: 0, of: 1 }) => {
      // The first reader takes every chunk; the others none (the real store splits by id range).
      if (part.index === 0) this.collectionReads.push(collectionId);
      const rows = part.index === 0 ? this.chunkRows.filter((chunk) => chunk.collectionIds.includes(collectionId)) : [];
      return iterate(rows.map((chunk) => this.doc(chunk)));
    },
    vectorsForMemories: (memoryIds) => {
      this.memoryReads.push([...memoryIds]);
      return Promise.resolve(this.chunkRows.flatMap((chunk) => (memoryIds.includes(chunk.memoryId) ? [this.doc(chunk)] : [])));
    },
  };

  // These tests keep snapshots off (snapshotMinChunks: Infinity): nothing is read or written.
  indexSnapshots: SearchIndexStore['indexSnapshots'] = {
    read: () => Promise.resolve(null),
    write: () => Promise.reject(new Error('no snapshots in these tests')),
    removeGeneration: () => Promise.resolve(),
  };

  /** Graph records (none unless a test adds them): entities, and entity provenance rows. */
  entityRows: GraphEntity[] = [];
  mentionRows: GraphMention[] = [];
  /** Entity ids passed to each entitiesByIds read. */
  entityReads: string[][] = [];

  graph: SearchIndexStore['graph'] = {
    entitiesOfCollection: (collectionId) => iterate(this.entityRows.filter((entity) => entity.collection_id === collectionId)),
    factsOfCollection: () => iterate([]),
    mentionsOfCollection: (collectionId) => iterate(this.mentionRows.filter((row) => row.collection_id === collectionId)),
    mentionsOfMemories: (memoryIds) => {
      this.memoryReads.push([...memoryIds]);
      return Promise.resolve(this.mentionRows.filter((row) => memoryIds.includes(row.memory_id)));
    },
    entitiesByIds: (ids) => {
      this.entityReads.push([...ids]);
      return Promise.resolve(this.entityRows.filter((entity) => ids.includes(entity.id)));
    },
    factsByIds: () => Promise.resolve([]),
  };

  /** One chunk per memory here: its id is stable, as the store's are (derived from memory and index). */
  private doc(chunk: FakeChunk) {
    return {
      id: `${chunk.memoryId}:0`,
      memory_id: chunk.memoryId,
      collection_ids: chunk.collectionIds,
      text: chunk.text,
      embedding: vectorToBinary(chunk.vector),
    };
  }

  addMemory(memoryId: string, collectionIds: string[], text: string, vector: number[]): void {
    this.chunkRows.push({ memoryId, collectionIds, text, vector: Float32Array.from(vector) });
  }

  publish(change: ChangeInput): void {
    this.seq += 1;
    this.feed.push({ seq: this.seq, memory_id: '', ...change });
  }

  /** The feed moves on past a follower's retention: what it did not read is trimmed away. */
  publishPastRetention(changes: ChangeInput[]): void {
    for (const change of changes) this.publish(change);
    this.seq += 100;
    this.publish({ op: 'upsert', memory_id: 'nothing', collection_ids: [] });
    this.feed = this.feed.slice(-1);
  }

  readsOf(memoryId: string): number {
    return this.memoryReads.filter((ids) => ids.includes(memoryId)).length;
  }
}

const QUERY = Float32Array.from([1, 0, 0, 0]);

describe('a search index following the index-change feed', () => {
  let store: FakeStore;
  let index: SearchIndex;

  /** Loads collections as a search does, and lets them go again. */
  const search = async (collectionIds: string[]): Promise<string[]> => {
    await index.prepare(collectionIds, 't');
    try {
      return index.vectorSearch(QUERY, collectionIds, 10).map((hit) => hit.memoryId);
    } finally {
      index.release(collectionIds);
    }
  };

  beforeEach(async () => {
    store = new FakeStore();
    index = new SearchIndex(store, MODEL, DIMENSIONS, createLogger('test', 'silent'), { snapshotMinChunks: Infinity });
    await index.start();
    await index.stop();
    store.addMemory('a1', ['A'], 'alpha one', [1, 0, 0, 0]);
    store.addMemory('b1', ['B'], 'beta one', [1, 0, 0, 0]);
    // Followed from some seq on (a follower at 0 has nothing to fall behind from).
    store.publish({ op: 'upsert', memory_id: 'a1', collection_ids: ['A'] });
  });

  it('reads nothing for a changed memory whose collections it has not loaded, and reads one it has', async () => {
    assert.deepEqual(await search(['A']), ['a1']);
    store.addMemory('b2', ['B'], 'beta two', [1, 0, 0, 0]);
    store.publish({ op: 'upsert', memory_id: 'b2', collection_ids: ['B'] });
    store.addMemory('a2', ['A'], 'alpha two', [0.9, 0.1, 0, 0]);
    store.publish({ op: 'upsert', memory_id: 'a2', collection_ids: ['A'] });
    await index.catchUp();
    assert.equal(store.readsOf('b2'), 0, 'no chunk or graph read for a memory of an unloaded collection');
    assert.ok(store.readsOf('a2') > 0);
    assert.deepEqual((await search(['A'])).sort(), ['a1', 'a2']);
  });

  it('still drops a memory that moved out of its loaded collections, without reading it', async () => {
    assert.deepEqual(await search(['A']), ['a1']);
    store.chunkRows[0]!.collectionIds = ['B'];
    store.publish({ op: 'upsert', memory_id: 'a1', collection_ids: ['B'] });
    await index.catchUp();
    assert.equal(store.readsOf('a1'), 0);
    assert.deepEqual(await search(['A']), []);
  });

  it('reads a memory whose notice names no collections (written by an earlier version)', async () => {
    assert.deepEqual(await search(['A']), ['a1']);
    store.addMemory('a2', ['A'], 'alpha two', [0.9, 0.1, 0, 0]);
    store.publish({ op: 'upsert', memory_id: 'a2' });
    await index.catchUp();
    assert.deepEqual((await search(['A'])).sort(), ['a1', 'a2']);
  });

  it('after a feed gap, reads each partition again only when it is next searched', async () => {
    await search(['A']);
    await search(['B']);
    assert.deepEqual(store.collectionReads, ['A', 'B']);
    // Missed during the gap: a new memory in A, and b1 deleted.
    store.addMemory('a2', ['A'], 'alpha two', [0.9, 0.1, 0, 0]);
    store.chunkRows = store.chunkRows.filter((chunk) => chunk.memoryId !== 'b1');
    store.publishPastRetention([
      { op: 'upsert', memory_id: 'a2', collection_ids: ['A'] },
      { op: 'remove', memory_id: 'b1' },
    ]);
    await index.catchUp();
    assert.deepEqual(store.collectionReads, ['A', 'B'], 'nothing read at once');
    assert.equal(index.budgetStats().collections, 0, 'the stale partitions are dropped');
    assert.deepEqual((await search(['A'])).sort(), ['a1', 'a2']);
    assert.deepEqual(store.collectionReads, ['A', 'B', 'A'], 'only the searched collection is read');
    assert.deepEqual(await search(['B']), []);
  });

  it('after a feed gap, reads a partition a search holds at once (that search waits for it)', async () => {
    await search(['A']);
    await index.prepare(['A'], 't'); // a search in progress
    store.addMemory('a2', ['A'], 'alpha two', [0.9, 0.1, 0, 0]);
    store.publishPastRetention([{ op: 'upsert', memory_id: 'a2', collection_ids: ['A'] }]);
    await index.catchUp();
    assert.deepEqual(
      index
        .vectorSearch(QUERY, ['A'], 10)
        .map((hit) => hit.memoryId)
        .sort(),
      ['a1', 'a2'],
    );
    index.release(['A']);
  });

  it('a bulk change of a collection is one notice: its partition is read again on its next search', async () => {
    await search(['A']);
    for (let i = 2; i <= 50; i++) store.addMemory(`a${i}`, ['A'], `alpha ${i}`, [0.9, 0.1, 0, 0]);
    store.publish({ op: 'reload_collection', collection_id: 'A' });
    await index.catchUp();
    assert.equal(store.memoryReads.length, 0, 'no per-memory read');
    assert.deepEqual(store.collectionReads, ['A'], 'nor a reload before it is searched');
    assert.equal((await search(['A'])).length, 10);
    assert.deepEqual(store.collectionReads, ['A', 'A']);
  });

  it('a dropped collection leaves nothing behind, even in a partition a search holds', async () => {
    await search(['A']);
    await index.prepare(['A'], 't');
    store.chunkRows = store.chunkRows.filter((chunk) => chunk.memoryId !== 'a1');
    store.publish({ op: 'drop_collection', collection_id: 'A' });
    await index.catchUp();
    assert.deepEqual(index.vectorSearch(QUERY, ['A'], 10), []);
    assert.deepEqual(index.lexicalSearch('alpha', ['A'], 10).hits, []);
    index.release(['A']);
    assert.equal(index.budgetStats().collections, 0);
  });
});

/** The fake store with somewhere to keep one snapshot, as store/index-snapshots.ts keeps them. */
class SnapshotKeepingStore extends FakeStore {
  /** The snapshot written, its parts as the store would read them back (a fresh iteration per read). */
  saved: (Omit<StoredIndexSnapshot, 'parts'> & { parts: Uint8Array[] }) | null = null;
  /** Runs once the reader has seen the head and before the parts are returned (a write meanwhile). */
  whileReading: (() => void) | null = null;

  override indexSnapshots: SearchIndexStore['indexSnapshots'] = {
    read: (_collectionId, _model, wanted) => {
      // As the store does: the head is offered first, and a snapshot not wanted is not read.
      if (!this.saved || (wanted && !wanted({ ...this.saved, bytes: this.saved.byteLength }))) return Promise.resolve(null);
      this.whileReading?.();
      return Promise.resolve({ ...this.saved, parts: iterate(this.saved.parts) });
    },
    write: (meta, bytes) => {
      // In pieces of an odd size at odd offsets, as no store would align them.
      const parts = Array.from({ length: Math.ceil(bytes.byteLength / 1001) }, (_, i) => {
        const piece = bytes.subarray(i * 1001, (i + 1) * 1001);
        const buffer = new Uint8Array(piece.byteLength + 1);
        buffer.set(piece, 1);
        return buffer.subarray(1);
      });
      this.saved = { ...meta, generation: 'g1', parts, byteLength: bytes.byteLength };
      return Promise.resolve('g1');
    },
    removeGeneration: () => {
      this.saved = null;
      return Promise.resolve();
    },
  };
}

describe('a search index loading a collection from its persisted snapshot', () => {
  const WORDS = 'harpsichord lisbon tuning workshop cathedral oslo sales report fork porto shipment ghent'.split(' ');
  const logger = createLogger('test', 'silent');
  let store: SnapshotKeepingStore;
  const random = seededRandom(5);
  const vector = (): number[] => Array.from({ length: DIMENSIONS }, () => random() * 2 - 1);
  const text = (): string =>
    Array.from({ length: 3 + Math.floor(random() * 9) }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  const open = async (options: { snapshotMinChunks: number; snapshotReads?: boolean }): Promise<SearchIndex> => {
    const index = new SearchIndex(store, MODEL, DIMENSIONS, logger, options);
    await index.start();
    await index.prepare(['A'], 't');
    index.release(['A']);
    return index;
  };
  const queries = Array.from({ length: 8 }, () => Float32Array.from(vector()));

  beforeEach(async () => {
    store = new SnapshotKeepingStore();
    for (let m = 0; m < 40; m++) store.addMemory(`m${m}`, ['A'], text(), vector());
    store.publish({ op: 'upsert', memory_id: 'm0', collection_ids: ['A'] });
    const writer = await open({ snapshotMinChunks: 1 });
    await writer.stop();
    assert.ok(store.saved, 'a load that read the chunks leaves a snapshot');
    // After the snapshot: a new memory, a deleted one and a changed one, each with its notice.
    store.addMemory('n1', ['A'], text(), vector());
    store.publish({ op: 'upsert', memory_id: 'n1', collection_ids: ['A'] });
    store.chunkRows = store.chunkRows.filter((chunk) => chunk.memoryId !== 'm3');
    store.publish({ op: 'remove', memory_id: 'm3' });
    const changed = store.chunkRows.find((chunk) => chunk.memoryId === 'm5')!;
    changed.text = 'harpsichord harpsichord oslo';
    changed.vector = Float32Array.from(vector());
    store.publish({ op: 'upsert', memory_id: 'm5', collection_ids: ['A'] });
  });

  it('reads nothing of the collection but the changed memories, and ranks exactly as a load from the chunks', async () => {
    const readsBefore = store.collectionReads.length;
    const reader = await open({ snapshotMinChunks: 1 });
    assert.equal(reader.budgetStats().snapshotLoads, 1);
    assert.equal(store.collectionReads.length, readsBefore, 'no chunk of the collection read whole');
    assert.deepEqual(
      store.memoryReads.flat().sort(),
      ['m3', 'm3', 'm5', 'm5', 'n1', 'n1'],
      'only the memories the feed names (chunks and graph)',
    );
    const baseline = await open({ snapshotMinChunks: Infinity });
    assert.equal(baseline.budgetStats().snapshotLoads, 0);
    assert.equal(reader.loadedChunkCount(), baseline.loadedChunkCount());
    for (const query of queries) assert.deepEqual(reader.vectorSearch(query, ['A'], 50), baseline.vectorSearch(query, ['A'], 50));
    for (const words of ['harpsichord', 'oslo sales', 'porto shipment ghent', 'lisbon']) {
      assert.deepEqual(reader.lexicalSearch(words, ['A'], 50).hits, baseline.lexicalSearch(words, ['A'], 50).hits, words);
    }
    assert.equal(
      reader.vectorSearch(queries[0]!, ['A'], 50).filter((hit) => hit.memoryId === 'm3').length,
      0,
      'the deleted memory is gone',
    );
  });

  it('reads the chunks instead after a bulk change of the collection, or when the stored chunks do not add up', async () => {
    store.addMemory('bulk', ['A'], text(), vector());
    store.publish({ op: 'reload_collection', collection_id: 'A' });
    const afterBulk = await open({ snapshotMinChunks: Infinity });
    const readsBefore = store.collectionReads.length;
    const reader = await open({ snapshotMinChunks: 1 });
    assert.equal(reader.budgetStats().snapshotLoads, 0, 'a bulk change since the snapshot: not used');
    assert.equal(store.collectionReads.length, readsBefore + 1);
    assert.deepEqual(reader.vectorSearch(queries[1]!, ['A'], 50), afterBulk.vectorSearch(queries[1]!, ['A'], 50));
    await reader.stop(); // it wrote a fresh snapshot: used next time

    // A chunk the feed never announced (a notice lost): the count tells, and the chunks are read.
    store.addMemory('silent', ['A'], text(), vector());
    const counted = await open({ snapshotMinChunks: 1 });
    assert.equal(counted.budgetStats().snapshotLoads, 0);
    assert.equal(counted.vectorSearch(queries[2]!, ['A'], 100).filter((hit) => hit.memoryId === 'silent').length, 1);
  });
  it('counts the stored chunks while the snapshot is read, and catches a memory written meanwhile in the next round', async () => {
    const counts: number[] = [];
    const count = store.chunks.countForCollection.bind(store.chunks);
    store.chunks.countForCollection = async (collectionId, model) => {
      const stored = await count(collectionId, model);
      counts.push(stored);
      return stored;
    };
    // Written after the head was read (so after the early count) and announced before the feed is read.
    store.whileReading = () => {
      store.addMemory('late', ['A'], text(), vector());
      store.publish({ op: 'upsert', memory_id: 'late', collection_ids: ['A'] });
    };
    const reader = await open({ snapshotMinChunks: 1 });
    assert.equal(reader.budgetStats().snapshotLoads, 1);
    assert.deepEqual(counts, [40, 41], 'the early count misses it, the second round agrees');
    const baseline = await open({ snapshotMinChunks: Infinity });
    assert.equal(reader.loadedChunkCount(), baseline.loadedChunkCount());
    for (const query of queries) assert.deepEqual(reader.vectorSearch(query, ['A'], 50), baseline.vectorSearch(query, ['A'], 50));
  });

  it('refuses a snapshot larger than the budget before reading its parts', async () => {
    let partsRead = false;
    store.whileReading = () => (partsRead = true);
    const index = new SearchIndex(store, MODEL, DIMENSIONS, logger, {
      snapshotMinChunks: 1,
      maxBytes: store.saved!.byteLength - 1,
    });
    await index.start();
    await assert.rejects(index.prepare(['A'], 't'), (error) => error instanceof IndexBudgetError && error.kind === 'exceeded');
    assert.equal(partsRead, false);
    assert.equal(index.budgetStats().collections, 0);
  });

  it('does not read the parts of a snapshot of another format', async () => {
    store.saved = { ...store.saved!, format: 'partition-0-old' };
    let partsRead = false;
    store.whileReading = () => (partsRead = true);
    const reader = await open({ snapshotMinChunks: 1 });
    assert.equal(reader.budgetStats().snapshotLoads, 0);
    assert.equal(partsRead, false);
  });
});

describe('a delete that takes names from an entity other memories still back', () => {
  const at = new Date('2026-01-01T00:00:00Z');
  const entity = (name: string, aliasKeys: string[]): GraphEntity => ({
    id: 'e1',
    tenant_id: 't',
    collection_id: 'A',
    key: aliasKeys[0]!,
    name,
    category: 'person',
    aliases: [name],
    alias_keys: aliasKeys,
    tokens: [],
    description: '',
    created_at: at,
    updated_at: at,
  });
  const row = (memoryId: string): GraphMention => ({
    id: `${memoryId}-e1`,
    tenant_id: 't',
    collection_id: 'A',
    memory_id: memoryId,
    chunk_index: 0,
    target_kind: 'entity',
    target_id: 'e1',
    count: 1,
    confidence: 1,
  });
  const namesFor = (index: SearchIndex, key: string): string[] => index.graphMatch(['A'], [key]).entities.map((matched) => matched.name);

  /**
   * An index with A loaded holding m2 only, and the entity as the store had it while m1 existed:
   * as in a process whose feed batch read m2 and the entity before m1's delete and applied them
   * after it (m1's own upsert may not have reached it). Then the delete: m1's rows and the name only
   * it gave leave the store.
   */
  async function afterDeletingFirst(store: FakeStore): Promise<SearchIndex> {
    store.addMemory('m2', ['A'], 'ingrid halvorsen', [0, 1, 0, 0]);
    store.entityRows = [entity('Ingrid Marit Halvorsen', ['ingrid marit halvorsen', 'ingrid halvorsen'])];
    store.mentionRows = [row('m2')];
    const index = new SearchIndex(store, MODEL, DIMENSIONS, createLogger('test', 'silent'), { snapshotMinChunks: Infinity });
    await index.start();
    await index.stop();
    await index.prepare(['A'], 't');
    index.release(['A']);
    assert.deepEqual(namesFor(index, 'ingrid halvorsen'), ['Ingrid Marit Halvorsen']);
    index.forget(['m1']);
    store.entityRows = [entity('Ingrid Halvorsen', ['ingrid halvorsen'])];
    return index;
  }

  it("shows the store's name once the delete's refresh_graph notice is read, even where the memory itself was never held", async () => {
    const store = new FakeStore();
    const index = await afterDeletingFirst(store);
    store.publish({ op: 'remove', memory_id: 'm1' });
    await index.catchUp();
    // The remove alone cannot say which entities m1 named here: this index never held m1.
    assert.deepEqual(namesFor(index, 'ingrid halvorsen'), ['Ingrid Marit Halvorsen']);
    store.publish({ op: 'refresh_graph', memory_id: 'm1', target_ids: ['e1', 'not-held'] });
    await index.catchUp();
    assert.deepEqual(store.entityReads.at(-1), ['e1'], 'only what a partition holds is read');
    assert.deepEqual(namesFor(index, 'ingrid halvorsen'), ['Ingrid Halvorsen']);
    assert.deepEqual(namesFor(index, 'ingrid marit halvorsen'), [], 'the lost alias no longer matches');
  });

  it('reads the records again on the next catch-up when the read fails', async () => {
    const store = new FakeStore();
    const index = await afterDeletingFirst(store);
    const read = store.graph.entitiesByIds;
    store.graph.entitiesByIds = () => Promise.reject(new Error('the store is down'));
    store.publish({ op: 'refresh_graph', memory_id: 'm1', target_ids: ['e1'] });
    await assert.rejects(index.catchUp(), /the store is down/);
    store.graph.entitiesByIds = read;
    await index.catchUp();
    assert.deepEqual(namesFor(index, 'ingrid halvorsen'), ['Ingrid Halvorsen']);
  });
});
