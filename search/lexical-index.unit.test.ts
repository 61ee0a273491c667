import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LexicalIndex } from './lexical-index.js';
import type { LexicalHit, LexicalPartition } from './lexical-partition.js';
import { tokenize } from './tokenize.js';

interface Doc {
  chunkId: string;
  memoryId: string;
  text: string;
}

const ids = (hits: LexicalHit[]): string[] => hits.map((hit) => hit.chunkId);

function indexOf(docs: Doc[], collectionId = 'c1'): { index: LexicalIndex; partition: LexicalPartition } {
  const index = new LexicalIndex();
  const partition = index.createPartition(collectionId);
  for (const doc of docs) partition.upsert(doc.chunkId, doc.memoryId, doc.text);
  return { index, partition };
}

const doc = (chunkId: string, text: string, memoryId = chunkId.split(':')[0]!): Doc => ({ chunkId, memoryId, text });

/** Textbook BM25 computed from scratch, to check the index against something independent of it. */
function referenceScores(docs: Doc[], query: string): Map<string, number> {
  const tokenized = docs.map((entry) => ({ chunkId: entry.chunkId, tokens: tokenize(entry.text) }));
  const documentCount = tokenized.length;
  const averageLength = tokenized.reduce((sum, entry) => sum + entry.tokens.length, 0) / documentCount;
  const scores = new Map<string, number>();
  for (const term of new Set(tokenize(query))) {
    const documentFrequency = tokenized.filter((entry) => entry.tokens.includes(term)).length;
    if (documentFrequency === 0) continue;
    const idf = Math.log(1 + (documentCount - documentFrequency + 0.5) / (documentFrequency + 0.5));
    for (const entry of tokenized) {
      const frequency = entry.tokens.filter((token) => token === term).length;
      if (frequency === 0) continue;
      const norm = 1.2 * (1 - 0.75 + (0.75 * entry.tokens.length) / averageLength);
      scores.set(entry.chunkId, (scores.get(entry.chunkId) ?? 0) + (idf * frequency * 2.2) / (frequency + norm));
    }
  }
  return scores;
}

function assertSameHits(actual: LexicalHit[], expected: LexicalHit[], context: string): void {
  assert.deepEqual(ids(actual), ids(expected), context);
  for (let position = 0; position < actual.length; position++) {
    assert.ok(Math.abs(actual[position]!.score - expected[position]!.score) < 1e-9, `${context}: score at ${position}`);
    assert.equal(actual[position]!.memoryId, expected[position]!.memoryId, context);
  }
}

/** Deterministic PRNG (mulberry32) so a failing randomized case can be replayed. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

const VOCABULARY = (
  'apple banana cherry delta echo falcon granite harbor island jungle kettle lantern meadow nickel orbit pepper quartz river ' +
  'saddle timber umbrella velvet walnut yonder zephyr amber basil cobalt dune ember fjord glacier'
).split(' ');

function randomText(random: () => number, words: number): string {
  const parts: string[] = [];
  for (let index = 0; index < words; index++) {
    // Skewed choice so some words are common and some rare.
    const word = VOCABULARY[Math.floor(random() ** 2 * VOCABULARY.length)]!;
    parts.push(random() < 0.05 ? `ZX-${Math.floor(random() * 50)}` : word);
  }
  return parts.join(' ');
}

const QUERIES = ['apple', 'zephyr amber', 'ZX-7', 'banana cherry delta', 'fjord glacier ember', 'echo ZX-12 river', 'apple banana'];

describe('LexicalIndex', () => {
  it('finds exact identifiers and numbers', () => {
    const { index } = indexOf([
      doc('a:0', 'Order ZX-4471 shipped to the warehouse'),
      doc('b:0', 'Order ZX-4472 is pending'),
      doc('c:0', 'Invoice 2024-118 was paid in full'),
      doc('d:0', 'Invoice 2024-119 is overdue since 2024'),
      doc('e:0', 'Rate limit raised to 3.5 requests per second'),
    ]);
    assert.deepEqual(ids(index.search('ZX-4471', ['c1'], 5).hits).slice(0, 1), ['a:0']);
    assert.deepEqual(ids(index.search('4471', ['c1'], 5).hits), ['a:0']);
    assert.deepEqual(ids(index.search('invoice 2024-118', ['c1'], 5).hits)[0], 'c:0');
    assert.deepEqual(ids(index.search('3.5', ['c1'], 5).hits), ['e:0']);
    // The exact code outranks a document that shares only its prefix.
    const zx = index.search('ZX-4471', ['c1'], 5).hits;
    assert.deepEqual(ids(zx), ['a:0', 'b:0']);
    assert.ok(zx[0]!.score > zx[1]!.score * 2);
  });

  it('matches inflected forms through stemming', () => {
    const { index } = indexOf([doc('a:0', 'She was running late for the meeting'), doc('b:0', 'A quiet afternoon')]);
    assert.deepEqual(ids(index.search('run', ['c1'], 5).hits), ['a:0']);
    assert.deepEqual(ids(index.search('runs', ['c1'], 5).hits), ['a:0']);
    assert.deepEqual(ids(index.search('meetings', ['c1'], 5).hits), ['a:0']);
  });

  it('scores exactly like textbook BM25 (k1 = 1.2, b = 0.75, non-negative IDF)', () => {
    const docs = [
      doc('a:0', 'apple banana apple cherry'),
      doc('b:0', 'banana cherry delta echo falcon granite'),
      doc('c:0', 'apple'),
      doc('d:0', 'cherry cherry cherry banana'),
    ];
    const { index } = indexOf(docs);
    for (const query of ['apple', 'banana', 'cherry apple', 'falcon banana delta']) {
      const expected = referenceScores(docs, query);
      const hits = index.search(query, ['c1'], 10).hits;
      assert.equal(hits.length, expected.size, query);
      for (const hit of hits) assert.ok(Math.abs(hit.score - expected.get(hit.chunkId)!) < 1e-9, `${query}: ${hit.chunkId}`);
    }
  });

  it('ranks the rarer term higher, saturates term frequency, and favours shorter documents', () => {
    const { index } = indexOf([
      doc('rare:0', 'alpha filler1 filler2'),
      doc('common1:0', 'beta filler3 filler4'),
      doc('common2:0', 'beta filler5 filler6'),
      doc('common3:0', 'beta filler7 filler8'),
    ]);
    const hits = index.search('alpha beta', ['c1'], 10).hits;
    assert.equal(hits[0]!.chunkId, 'rare:0');
    assert.ok(hits[0]!.score > hits[1]!.score);

    // Same length, growing term frequency: each extra occurrence adds less than the previous one.
    const saturation = indexOf([
      doc('tf1:0', 'gamma pad1 pad2 pad3'),
      doc('tf2:0', 'gamma gamma pad4 pad5'),
      doc('tf3:0', 'gamma gamma gamma pad6'),
      doc('none:0', 'pad7 pad8 pad9 pad10'),
    ]).index;
    const byId = new Map(saturation.search('gamma', ['c1'], 10).hits.map((hit) => [hit.chunkId, hit.score]));
    const [one, two, three] = [byId.get('tf1:0')!, byId.get('tf2:0')!, byId.get('tf3:0')!];
    assert.ok(one < two && two < three);
    assert.ok(two - one > three - two);

    const lengths = indexOf([
      doc('short:0', 'delta pad1'),
      doc('long:0', 'delta pad2 pad3 pad4 pad5 pad6 pad7 pad8'),
      doc('x:0', 'pad9'),
    ]).index;
    assert.deepEqual(ids(lengths.search('delta', ['c1'], 10).hits), ['short:0', 'long:0']);
  });

  it('upsert replaces a chunk: its old terms are gone and the size is unchanged', () => {
    const { index, partition } = indexOf([doc('a:0', 'obsolete wording here'), doc('b:0', 'other text')]);
    partition.upsert('a:0', 'a', 'fresh wording now');
    assert.equal(partition.size, 2);
    assert.deepEqual(index.search('obsolete', ['c1'], 5).hits, []);
    assert.equal(index.search('obsolete', ['c1'], 5).stats.matchedTerms, 0);
    assert.deepEqual(ids(index.search('fresh', ['c1'], 5).hits), ['a:0']);
    const fresh = indexOf([doc('b:0', 'other text'), doc('a:0', 'fresh wording now')]).index;
    assertSameHits(index.search('wording other', ['c1'], 5).hits, fresh.search('wording other', ['c1'], 5).hits, 'replaced vs fresh');
  });

  it('upsert can move a chunk to another memory', () => {
    const { index, partition } = indexOf([doc('a:0', 'shared words', 'a')]);
    partition.upsert('a:0', 'b', 'shared words');
    assert.ok(!partition.hasMemory('a'));
    assert.ok(partition.hasMemory('b'));
    assert.equal(index.search('shared', ['c1'], 5).hits[0]!.memoryId, 'b');
    partition.removeMemory('b');
    assert.equal(partition.size, 0);
  });

  it('removeMemory removes every chunk and restores df and avgdl exactly', () => {
    const kept = [doc('a:0', 'apple banana cherry'), doc('a:1', 'banana split dessert'), doc('c:0', 'cherry pie apple crumble with cream')];
    const removed = [doc('b:0', 'apple apple banana kiwi'), doc('b:1', 'kiwi kiwi cherry pie and more words to change the average')];
    const { index, partition } = indexOf([kept[0]!, removed[0]!, kept[1]!, removed[1]!, kept[2]!]);
    index.removeMemory('b');
    assert.equal(partition.size, 3);
    assert.ok(!partition.hasMemory('b'));
    assert.ok(partition.hasMemory('a'));
    const fresh = indexOf(kept).index;
    for (const query of ['kiwi', 'apple', 'banana cherry', 'pie apple kiwi', 'cream']) {
      const result = index.search(query, ['c1'], 10);
      assert.ok(!result.hits.some((hit) => hit.memoryId === 'b'), query);
      const expected = fresh.search(query, ['c1'], 10);
      assertSameHits(result.hits, expected.hits, query);
      assert.deepEqual(result.stats, expected.stats, query);
    }
    // Removing an unknown memory is a no-op.
    index.removeMemory('nope');
    assert.equal(partition.size, 3);
  });

  it('stays identical to a freshly built index through many upserts, replacements and deletes (compaction)', () => {
    const random = seededRandom(42);
    const { index, partition } = indexOf([]);
    const live = new Map<string, Doc>();
    let sawCompaction = false;
    let insertedSlots = 0;
    for (let round = 0; round < 6; round++) {
      for (let count = 0; count < 120; count++) {
        const memoryId = `m${Math.floor(random() * 150)}`;
        const chunkId = `${memoryId}:${Math.floor(random() * 3)}`;
        const entry = doc(chunkId, randomText(random, 3 + Math.floor(random() * 25)), memoryId);
        partition.upsert(entry.chunkId, entry.memoryId, entry.text);
        insertedSlots++;
        live.set(chunkId, entry);
      }
      const memories = [...new Set([...live.values()].map((entry) => entry.memoryId))];
      for (const memoryId of memories) {
        if (random() >= 0.45) continue;
        partition.removeMemory(memoryId);
        for (const [chunkId, entry] of live) if (entry.memoryId === memoryId) live.delete(chunkId);
      }
      const storage = partition.storageStats();
      if (storage.slots < insertedSlots) sawCompaction = true;
      assert.equal(partition.size, live.size);
      assert.equal(storage.documents, live.size);

      const docs = [...live.values()].sort((left, right) => (left.chunkId < right.chunkId ? -1 : 1));
      const fresh = indexOf(docs).index;
      for (const query of QUERIES) {
        const result = index.search(query, ['c1'], 15);
        const expected = fresh.search(query, ['c1'], 15);
        assertSameHits(result.hits, expected.hits, `round ${round}, ${query}`);
        assert.deepEqual(result.stats, expected.stats);
        const reference = referenceScores(docs, query);
        for (const hit of result.hits) assert.ok(Math.abs(hit.score - reference.get(hit.chunkId)!) < 1e-9, `reference ${query}`);
      }
      // Queries drop dead postings in place; the bookkeeping must still add up.
      const livePostings = docs.reduce((sum, entry) => sum + new Set(tokenize(entry.text)).size, 0);
      assert.equal(partition.storageStats().postings, livePostings, `postings after round ${round}`);
    }
    assert.ok(sawCompaction, 'the partition never compacted');
    // After compaction the dictionary holds only terms that still occur.
    const terms = new Set([...live.values()].flatMap((entry) => tokenize(entry.text)));
    const storage = partition.storageStats();
    assert.ok(storage.terms >= terms.size);
    assert.ok(storage.deadSlots <= storage.slots * 0.3 || storage.deadSlots < 32);
  });

  it('compacts after mass deletion and drops terms that no longer occur', () => {
    const { index, partition } = indexOf([]);
    for (let memory = 0; memory < 200; memory++) partition.upsert(`m${memory}:0`, `m${memory}`, `common unique${memory} code-${memory}`);
    for (let memory = 0; memory < 150; memory++) partition.removeMemory(`m${memory}`);
    const storage = partition.storageStats();
    assert.equal(storage.documents, 50);
    assert.ok(storage.slots < 200, `slots ${storage.slots}`);
    assert.ok(storage.terms < 300, `terms ${storage.terms}`);
    assert.deepEqual(index.search('unique10', ['c1'], 5).hits, []);
    assert.deepEqual(ids(index.search('unique190', ['c1'], 5).hits), ['m190:0']);
    const survivors = Array.from({ length: 50 }, (_, offset) =>
      doc(`m${150 + offset}:0`, `common unique${150 + offset} code-${150 + offset}`),
    );
    assertSameHits(
      index.search('common code-170', ['c1'], 10).hits,
      indexOf(survivors).index.search('common code-170', ['c1'], 10).hits,
      'after mass delete',
    );
  });

  it('returns a chunk present in several partitions once, with its best score, and only from the named ones', () => {
    const index = new LexicalIndex();
    // In c1 "kiwi" is in every doc (low IDF); in c2 it is rare (high IDF), so c2 scores higher.
    const c1 = index.createPartition('c1');
    c1.upsert('a:0', 'a', 'kiwi mango');
    c1.upsert('x:0', 'x', 'kiwi');
    const c2 = index.createPartition('c2');
    c2.upsert('a:0', 'a', 'kiwi mango');
    c2.upsert('y:0', 'y', 'papaya');
    c2.upsert('z:0', 'z', 'guava');
    index.createPartition('c3').upsert('w:0', 'w', 'kiwi');

    const c2Only = index.search('kiwi', ['c2'], 5).hits;
    const both = index.search('kiwi', ['c1', 'c2', 'c2'], 5).hits;
    assert.deepEqual(ids(both).sort(), ['a:0', 'x:0']);
    assert.equal(both.find((hit) => hit.chunkId === 'a:0')!.score, c2Only[0]!.score);
    // The best score wins whichever partition is searched first.
    assertSameHits(index.search('kiwi', ['c2', 'c1'], 5).hits, both, 'partition order');
    assert.ok(c2Only[0]!.score > index.search('kiwi', ['c1'], 5).hits.find((hit) => hit.chunkId === 'a:0')!.score);
    assert.ok(!ids(both).includes('w:0'));
    assert.deepEqual(index.search('kiwi', ['missing'], 5).hits, []);
    assert.deepEqual(index.loadedCollections().sort(), ['c1', 'c2', 'c3']);
    index.dropPartition('c3');
    assert.equal(index.partition('c3'), undefined);
  });

  it('reports maxRarity near 1 for a unique code and near 0 for a term in every document', () => {
    const docs = Array.from({ length: 50 }, (_, position) => doc(`m${position}:0`, `status report ${position === 7 ? 'QX-9931' : ''}`));
    const { index } = indexOf(docs);
    const unique = index.search('QX-9931', ['c1'], 5);
    assert.ok(unique.stats.maxRarity > 0.99, `unique ${unique.stats.maxRarity}`);
    assert.deepEqual(unique.stats.terms, ['qx-9931', 'qx', '9931']);
    assert.equal(unique.stats.matchedTerms, 3);
    const everywhere = index.search('status', ['c1'], 5);
    assert.ok(everywhere.stats.maxRarity < 0.05, `everywhere ${everywhere.stats.maxRarity}`);
    assert.equal(everywhere.stats.maxRarity > 0, true);
    const mixed = index.search('status nothinglikethis', ['c1'], 5);
    assert.equal(mixed.stats.matchedTerms, 1);
    assert.equal(mixed.stats.terms.length, 2);
    assert.equal(index.search('nothinglikethis', ['c1'], 5).stats.maxRarity, 0);
  });

  it('returns no hits and does not throw for empty, stop-word-only or zero-k queries', () => {
    const { index } = indexOf([doc('a:0', 'the quick brown fox')]);
    for (const query of ['', '   ', 'the and of', '?!']) {
      const result = index.search(query, ['c1'], 5);
      assert.deepEqual(result.hits, [], query);
      assert.deepEqual(result.stats, { terms: [], matchedTerms: 0, maxRarity: 0 });
    }
    const zeroK = index.search('fox', ['c1'], 0);
    assert.deepEqual(zeroK.hits, []);
    assert.equal(zeroK.stats.matchedTerms, 1);
    assert.deepEqual(index.search('fox', [], 5).hits, []);
    const empty = new LexicalIndex();
    empty.createPartition('c1');
    assert.deepEqual(empty.search('fox', ['c1'], 5).hits, []);
  });

  it("keeps every posting when one term's list keeps growing at the end of the arena", () => {
    const docs = Array.from({ length: 300 }, (_, position) => doc(`m${position}:0`, position % 100 === 0 ? 'solo marker' : 'solo'));
    const { index } = indexOf(docs);
    const result = index.search('solo', ['c1'], 1000);
    assert.equal(result.hits.length, 300);
    assertSameHits(result.hits, indexOf([...docs].reverse()).index.search('solo', ['c1'], 1000).hits, 'insertion order');
    assert.deepEqual(ids(index.search('marker', ['c1'], 10).hits).sort(), ['m0:0', 'm100:0', 'm200:0']);
  });

  it('returns the top k in descending order, ties broken by chunk id', () => {
    const docs = Array.from({ length: 30 }, (_, position) =>
      doc(`m${String(position).padStart(2, '0')}:0`, `lemon ${'pad '.repeat(position % 5)}`),
    );
    const { index } = indexOf(docs);
    const hits = index.search('lemon', ['c1'], 7).hits;
    assert.equal(hits.length, 7);
    for (let position = 1; position < hits.length; position++) {
      const [previous, current] = [hits[position - 1]!, hits[position]!];
      assert.ok(previous.score > current.score || (previous.score === current.score && previous.chunkId < current.chunkId));
    }
    // Shortest docs (position % 5 === 0) first, in id order.
    assert.deepEqual(ids(hits).slice(0, 6), ['m00:0', 'm05:0', 'm10:0', 'm15:0', 'm20:0', 'm25:0']);
  });
});

describe('the piece cache of a cold load', () => {
  it('indexes plain words, camelCase, compounds and stop-words as tokenize says, chunk after chunk', () => {
    const texts = [
      'The getUserName helper reads ZX-4471 and alice@acme.io twice: getUserName, getUserName.',
      'Running runners run; the JSONParser parses IDs and URLs.',
      'the The THE getUserName zx-4471 Running',
    ];
    const index = new LexicalIndex();
    const partition = index.createPartition('c');
    texts.forEach((text, i) => partition.upsert(`m:${i}`, 'm', text));
    for (const [i, text] of texts.entries()) {
      const terms = [...new Set(tokenize(text))];
      const { hits } = index.search(terms.join(' '), ['c'], 10);
      assert.ok(
        hits.some((hit) => hit.chunkId === `m:${i}`),
        `chunk ${i} is found by its own terms`,
      );
    }
    const distinct = new Set(texts.flatMap((text) => tokenize(text)));
    assert.equal(partition.storageStats().terms, distinct.size, 'the same dictionary tokenize yields');
    const postings = texts.reduce((sum, text) => sum + new Set(tokenize(text)).size, 0);
    assert.equal(partition.storageStats().postings, postings, 'one posting per distinct term per chunk');
  });
});
