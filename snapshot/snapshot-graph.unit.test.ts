/**
 * A device snapshot's in-memory graph: the merge rules it shares with the collection graph, the
 * weights derived from its provenance rows (the same sums the format checks and search ranks by),
 * fact validity carried through, and a lossless round trip through the sealed wire form.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GraphScope, NewEntity, NewFact, NewMention } from '../core/graph-model.js';
import { DEFAULT_FACT_LEXICON, PredicateClassifier } from '../core/fact-lexicon.js';
import { GraphPartition, graphEntityInfo, graphFactInfo } from '../search/graph-index.js';
import { matchGraph } from '../search/graph-match.js';
import { CountingSlicer } from '../test/support/counting-slicer.js';
import { checkReferences, type SnapshotBody, type SnapshotEpisode } from './format.js';
import { fromWire, resolveTargets, toWire } from './wire.js';
import { SnapshotGraph } from './snapshot-graph.js';

const DIMENSIONS = 4;

const scope: GraphScope = { tenantId: 'tenant', collectionId: 'device' };
const empty = (): SnapshotBody => ({ episodes: [], entities: [], facts: [], mentions: [] });

const entity = (id: string, fields: Partial<NewEntity> = {}): NewEntity => ({
  id,
  key: id,
  name: id,
  category: 'person',
  aliases: [],
  aliasKeys: [id],
  description: `about ${id}`,
  nameVector: null,
  ...fields,
});
const fact = (id: string, fields: Partial<NewFact> = {}): NewFact => ({
  id,
  subjectId: 'alice',
  objectId: 'acme',
  predicate: 'work at',
  description: 'Alice works at Acme.',
  confidence: 0.5,
  ...fields,
});
const mention = (targetId: string, fields: Partial<NewMention> = {}): NewMention => ({
  memoryId: 'ep-1',
  chunkIndex: 0,
  kind: 'entity',
  targetId,
  count: 1,
  confidence: 1,
  description: '',
  ...fields,
});
const episode = (id: string, texts: string[]): SnapshotEpisode => ({
  id,
  kind: 'document',
  name: null,
  metadata: {},
  created_at: '2026-01-01T00:00:00.000Z',
  chunks: texts.map((text, index) => ({ index, text, source: { type: 'text' }, vector: null })),
});

/** A graph after these writes, each one `write` call. */
async function graphAfter(...writes: [NewEntity[], NewFact[], NewMention[]][]): Promise<SnapshotGraph> {
  const graph = new SnapshotGraph(empty(), DIMENSIONS);
  for (const [entities, facts, mentions] of writes) await graph.write(scope, entities, facts, mentions);
  return graph;
}

describe('SnapshotGraph merge rules (core/graph-merge.ts, the collection graph’s too)', () => {
  it('keeps the first name, category, description and name vector of an entity, and accumulates its aliases', async () => {
    const graph = await graphAfter(
      [[entity('alice', { name: 'Alice Smith', aliases: ['Alice'], aliasKeys: ['alice smith', 'alice'] })], [], []],
      [
        [
          entity('alice', {
            name: 'A. Smith',
            category: 'organization',
            description: 'later text',
            aliases: ['A. Smith', 'Alice'],
            aliasKeys: ['a smith', 'alice'],
            nameVector: new Float32Array([1, 0, 0, 0]),
          }),
        ],
        [],
        [],
      ],
    );
    const [stored] = (await graph.toBody()).entities;
    assert.deepEqual(
      { ...stored, weight: undefined },
      {
        id: 'alice',
        key: 'alice',
        name: 'Alice Smith',
        category: 'person',
        aliases: ['Alice', 'A. Smith'],
        alias_keys: ['alice smith', 'alice', 'a smith'],
        description: 'about alice',
        name_vector: null,
        weight: undefined,
      },
    );
    assert.equal(graph.entityCount, 1);
  });

  it('resolves an alias learnt in a later write to the same entity', async () => {
    const graph = await graphAfter(
      [[entity('alice', { aliasKeys: ['alice smith'] })], [], []],
      [[entity('alice', { aliasKeys: ['ally'] })], [], []],
    );
    assert.deepEqual(
      (await graph.findByKeys(scope, ['ally'])).map((candidate) => candidate.id),
      ['alice'],
    );
    assert.deepEqual(
      (await graph.findCandidates(scope, ['smith'], 10)).map((candidate) => candidate.id),
      ['alice'],
    );
  });

  it('leaves an alias key with the entity that claimed it first', async () => {
    const graph = await graphAfter([[entity('alice', { aliasKeys: ['al'] }), entity('albert', { aliasKeys: ['al'] })], [], []]);
    assert.deepEqual(
      (await graph.findByKeys(scope, ['al'])).map((candidate) => candidate.id),
      ['alice'],
    );
  });

  it('stops collecting fuzzy candidates at the limit', async () => {
    const graph = await graphAfter([
      'abcde'.split('').map((letter) => entity(`${letter}-smith`, { aliasKeys: [`${letter}${letter} smith`] })),
      [],
      [],
    ]);
    assert.equal((await graph.findCandidates(scope, ['smith'], 3)).length, 3);
    assert.equal((await graph.findCandidates(scope, ['jones'], 3)).length, 0);
  });

  // [first confidence, second confidence, kept]
  const confidences: [number, number, number][] = [
    [0.4, 0.9, 0.9],
    [0.9, 0.4, 0.9],
    [0.6, 0.6, 0.6],
  ];
  for (const [first, second, kept] of confidences) {
    it(`keeps a fact's best confidence and its first description (${first} then ${second})`, async () => {
      const graph = await graphAfter(
        [[], [fact('f1', { confidence: first })], []],
        [[], [fact('f1', { confidence: second, description: 'Later wording.' })], []],
      );
      const [stored] = (await graph.toBody()).facts;
      assert.equal(stored?.confidence, kept);
      assert.equal(stored?.description, 'Alice works at Acme.');
    });
  }
});

describe('SnapshotGraph weights: the sum of provenance counts, wherever the graph is read', () => {
  it("a target's weight sums its rows across chunks and episodes; a row written again replaces itself", async () => {
    const graph = await graphAfter(
      [[entity('alice'), entity('acme')], [fact('f1')], []],
      [[], [], [mention('alice', { count: 2 }), mention('alice', { chunkIndex: 1, count: 3 }), mention('acme')]],
      [[], [], [mention('alice', { memoryId: 'ep-2', count: 4 }), mention('f1', { kind: 'fact', count: 2 })]],
      // A retried write of the same rows (same episode, chunk and target) does not count them twice.
      [[], [], [mention('alice', { memoryId: 'ep-2', count: 4 }), mention('f1', { kind: 'fact', count: 2 })]],
    );
    const body = await graph.toBody();
    const weights = Object.fromEntries([...body.entities, ...body.facts].map((target) => [target.id, target.weight]));
    assert.deepEqual(weights, { alice: 9, acme: 1, f1: 2 });
    const partition = graph.partition();
    for (const [id, weight] of Object.entries(weights)) assert.equal(partition.weightOf(id), weight, `search's weight of ${id}`);

    // The same graph built and indexed in slices (a body a client sent), a turn for each record.
    const slicer = new CountingSlicer();
    const sliced = await SnapshotGraph.inSlices(body, DIMENSIONS, slicer);
    assert.deepEqual(await sliced.toBody(), body);
    const built = slicer.pauses;
    // A turn for each entity and fact; the rows are kept as they came, not walked (SnapshotGraph baseMentions).
    assert.ok(built >= body.entities.length + body.facts.length, `${built} turns building`);
    const slicedPartition = await sliced.partitionInSlices(slicer);
    // Then a turn per record, per 64 rows gathered and per episode set.
    const episodes = new Set(body.mentions.map((row) => row.episode_id)).size;
    assert.ok(
      slicer.pauses - built >= body.entities.length + body.facts.length + Math.floor(body.mentions.length / 64) + episodes,
      'turns indexing',
    );
    for (const [id, weight] of Object.entries(weights)) assert.equal(slicedPartition.weightOf(id), weight, `sliced weight of ${id}`);
  });

  it('gives an entity without provenance weight 0, which the format then refuses', async () => {
    const graph = await graphAfter([[entity('alice'), entity('lonely')], [], [mention('alice')]]);
    graph.addEpisode(episode('ep-1', ['Alice']));
    const body = await graph.toBody();
    assert.equal(body.entities.find((target) => target.id === 'lonely')?.weight, 0);
    const issues = await checkReferences(resolveTargets(await toWire(body)).body, DIMENSIONS);
    assert.deepEqual(
      issues.map((issue) => issue.path),
      ['body.entities.1'],
    );
  });
});

describe('SnapshotGraph fact validity', () => {
  const at = (iso: string) => new Date(iso);
  // [case, the mention's validity as written, as the body holds it]
  const cases: [string, Pick<NewMention, 'validFrom' | 'validTo'>, Record<string, string | null>][] = [
    ['not recorded', {}, {}],
    [
      'a start and no stated end',
      { validFrom: at('2025-03-01T00:00:00Z'), validTo: null },
      { valid_from: '2025-03-01T00:00:00.000Z', valid_to: null },
    ],
    [
      'an ending with an unknown start',
      { validFrom: null, validTo: at('2025-06-01T00:00:00Z') },
      { valid_from: null, valid_to: '2025-06-01T00:00:00.000Z' },
    ],
    [
      'both ends',
      { validFrom: at('2025-03-01T00:00:00Z'), validTo: at('2025-06-01T00:00:00Z') },
      { valid_from: '2025-03-01T00:00:00.000Z', valid_to: '2025-06-01T00:00:00.000Z' },
    ],
  ];
  for (const [name, validity, expected] of cases) {
    it(`carries ${name} into the body, the partition and back`, async () => {
      const graph = await graphAfter([[entity('alice'), entity('acme')], [fact('f1')], [mention('f1', { kind: 'fact', ...validity })]]);
      const [row] = (await graph.toBody()).mentions;
      assert.deepEqual(
        { valid_from: row?.valid_from, valid_to: row?.valid_to },
        { valid_from: undefined, valid_to: undefined, ...expected },
      );
      assert.equal('valid_from' in row!, 'valid_from' in expected, 'absent stays absent');
      const [timeline] = graph.partition().timelineFactsOf('alice');
      assert.deepEqual(timeline?.rows, [{ memoryId: 'ep-1', validFrom: validity.validFrom ?? null, validTo: validity.validTo ?? null }]);
      const reopened = new SnapshotGraph(await graph.toBody(), DIMENSIONS);
      assert.deepEqual((await reopened.toBody()).mentions, (await graph.toBody()).mentions);
    });
  }
});

describe('SnapshotGraph and the wire format', () => {
  it('round-trips through the sealed wire form unchanged, and the format finds nothing to refuse', async () => {
    const graph = await graphAfter([
      [
        entity('alice', { name: 'Alice', aliasKeys: ['alice'], nameVector: new Float32Array([0.5, -0.25, 1, 0]) }),
        entity('acme', { name: 'Acme', category: 'organization', aliasKeys: ['acme'] }),
      ],
      [fact('f1', { confidence: 0.75 })],
      [
        // A description that is a span of the chunk's text, one that is not, a later chunk, counts and confidence.
        mention('alice', { description: 'Alice works at Acme.', count: 2 }),
        mention('acme', { description: 'a company, per the note; 100% sure', confidence: 0.5 }),
        mention('alice', { chunkIndex: 1, description: 'She moved.' }),
        mention('f1', { kind: 'fact', description: 'Alice works at Acme.', validFrom: new Date('2025-03-01T00:00:00Z'), validTo: null }),
      ],
    ]);
    graph.addEpisode(episode('ep-1', ['Alice works at Acme. They build rockets.', 'She moved.']));
    const body = await graph.toBody();
    const { body: resolved, issues } = resolveTargets(await toWire(body));
    assert.deepEqual(issues, []);
    assert.deepEqual(await checkReferences(resolved, DIMENSIONS), []);
    const reopened = new SnapshotGraph(fromWire(resolved), DIMENSIONS);
    assert.deepEqual(await reopened.toBody(), body);
    // The name vector survives as a vector resolution can compare (int8: close, not exact).
    const [alice] = await reopened.findByKeys(scope, ['alice']);
    assert.ok(alice?.nameVector);
    assert.deepEqual(
      [...alice.nameVector].map((value) => Math.round(value * 100) / 100),
      [0.5, -0.25, 1, 0],
    );
  });
});

describe('SnapshotGraph sealed again with the mentions as they came', () => {
  /** A two-episode graph's body and its wire form, as a client sends it back. */
  async function sentGraph(): Promise<{ body: SnapshotBody; wire: Awaited<ReturnType<typeof toWire>> }> {
    const graph = await graphAfter(
      [
        [entity('alice', { name: 'Alice', aliasKeys: ['alice'] }), entity('acme', { name: 'Acme', category: 'organization' })],
        [fact('f1')],
        [
          mention('alice', { description: 'Alice works at Acme.', count: 2 }),
          mention('acme', { description: 'a company; 100% sure', confidence: 0.5 }),
          mention('f1', { kind: 'fact', description: 'Alice works at Acme.', validFrom: null, validTo: null }),
        ],
      ],
      [[], [], [mention('f1', { memoryId: 'ep-2', kind: 'fact', chunkIndex: 1, description: 'She still does.' })]],
    );
    graph.addEpisode(episode('ep-1', ['Alice works at Acme.']));
    graph.addEpisode(episode('ep-2', ['Hello.', 'She still does.']));
    const wire = await toWire(await graph.toBody());
    return { body: fromWire(resolveTargets(wire).body), wire };
  }

  /** A device create: a new episode naming a new entity (which moves every fact's index) and the old fact. */
  const create = async (graph: SnapshotGraph): Promise<void> => {
    graph.addEpisode(episode('ep-3', ['Bob joined Acme.']));
    await graph.write(
      scope,
      [entity('bob', { name: 'Bob', aliasKeys: ['bob'] })],
      [fact('f2', { subjectId: 'bob', description: 'Bob joined Acme.' })],
      [
        mention('bob', { memoryId: 'ep-3', description: 'Bob joined Acme.' }),
        mention('f1', { memoryId: 'ep-3', kind: 'fact', description: 'Bob joined Acme.' }),
        mention('f2', { memoryId: 'ep-3', kind: 'fact', description: 'Bob joined Acme.' }),
      ],
    );
  };

  it('gives the same wire form as encoding every row again, facts renumbered after a new entity', async () => {
    const { body, wire } = await sentGraph();
    const reused = new SnapshotGraph(body, DIMENSIONS, wire);
    const encoded = new SnapshotGraph(body, DIMENSIONS);
    await create(reused);
    await create(encoded);
    const sent = reused.sentMentions();
    assert.ok(sent);
    const again = await toWire(await reused.toBody(), undefined, sent);
    assert.deepEqual(again, await toWire(await encoded.toBody()));
    // The old episodes' strings were renumbered (f1 moved from index 2 to 3), not left as they came.
    assert.notEqual(again.episodes[0]!.mentions, wire.episodes[0]!.mentions);
    const { body: resolved, issues } = resolveTargets(again);
    assert.deepEqual([...issues, ...(await checkReferences(resolved, DIMENSIONS))], []);
  });

  it('sends them unchanged when no target moved', async () => {
    const { body, wire } = await sentGraph();
    const graph = new SnapshotGraph(body, DIMENSIONS, wire);
    graph.addEpisode(episode('ep-3', ['Acme again.']));
    await graph.write(scope, [], [], [mention('acme', { memoryId: 'ep-3', description: 'Acme again.' })]);
    const again = await toWire(await graph.toBody(), undefined, graph.sentMentions());
    assert.deepEqual(
      again.episodes.slice(0, 2).map((sentEpisode) => sentEpisode.mentions),
      wire.episodes.map((sentEpisode) => sentEpisode.mentions),
    );
  });

  it('offers none once a write touches an episode the snapshot already had', async () => {
    const { body, wire } = await sentGraph();
    const graph = new SnapshotGraph(body, DIMENSIONS, wire);
    await graph.write(scope, [], [], [mention('acme', { memoryId: 'ep-2', description: 'Hello.' })]);
    assert.equal(graph.sentMentions(), undefined);
    const rows = (await graph.toBody()).mentions.filter((row) => row.episode_id === 'ep-2');
    assert.equal(rows.length, 2, "the episode's rows are all kept, the new one added");
  });
});

describe("SnapshotGraph's search partition", () => {
  it('is the partition that setting its episodes one by one builds: records, rows, weights, matches and timelines', async () => {
    // Entities sharing an alias key (their order under the key decides ties), facts with validity,
    // episodes whose rows interleave targets and chunks, and a row naming a target twice in a chunk.
    const graph = await graphAfter([
      [
        entity('alice', { aliasKeys: ['alice', 'a smith'] }),
        entity('anna', { aliasKeys: ['anna', 'a smith'] }),
        entity('acme', { category: 'organization' }),
        entity('bob', { aliasKeys: ['bob', 'a smith'] }),
      ],
      [fact('f1'), fact('f2', { subjectId: 'bob', predicate: 'leave' })],
      [
        mention('bob', { memoryId: 'ep-2', description: 'Bob.' }),
        mention('alice', { count: 2, description: 'Alice.' }),
        mention('f1', { kind: 'fact', validFrom: new Date('2025-01-01T00:00:00Z'), validTo: null }),
        mention('acme', { chunkIndex: 1 }),
        mention('anna', { memoryId: 'ep-2', chunkIndex: 1, count: 3 }),
        mention('f2', { memoryId: 'ep-2', kind: 'fact', validFrom: null, validTo: new Date('2026-01-01T00:00:00Z') }),
        mention('alice', { memoryId: 'ep-3', description: 'Alice again.' }),
        mention('bob', { memoryId: 'ep-3' }),
        mention('f1', { memoryId: 'ep-3', kind: 'fact' }),
      ],
    ]);
    const body = await graph.toBody();
    const reference = new GraphPartition();
    const entities = new Map(body.entities.map((record) => [record.id, graphEntityInfo(record)]));
    const facts = new Map(body.facts.map((record) => [record.id, graphFactInfo(record)]));
    for (const episodeId of new Set(body.mentions.map((row) => row.episode_id))) {
      const rows = body.mentions
        .filter((row) => row.episode_id === episodeId)
        .map((row) => ({
          targetId: row.target_id,
          chunkIndex: row.chunk,
          count: row.count,
          description: row.description,
          ...(row.valid_from !== undefined ? { validFrom: row.valid_from === null ? null : new Date(row.valid_from) } : {}),
          ...(row.valid_to !== undefined ? { validTo: row.valid_to === null ? null : new Date(row.valid_to) } : {}),
        }));
      reference.setMemory(episodeId, rows, entities, facts);
    }
    const keys = ['alice', 'anna', 'bob', 'acme', 'a smith'];
    const classifier = new PredicateClassifier(DEFAULT_FACT_LEXICON);
    for (const partition of [graph.partition(), await new SnapshotGraph(body, DIMENSIONS).partitionInSlices(new CountingSlicer())]) {
      assert.deepEqual(partition.exportState(), reference.exportState());
      assert.deepEqual(matchGraph([partition], keys), matchGraph([reference], keys));
      for (const key of keys) assert.deepEqual(matchGraph([partition], [key]), matchGraph([reference], [key]), key);
      assert.deepEqual(partition.timelines(['f1', 'f2'], classifier), reference.timelines(['f1', 'f2'], classifier));
    }
  });
});
