import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GraphIndex, GraphPartition, type GraphEntityInfo, type ProvenanceRow } from './graph-index.js';
import { DEFAULT_FACT_LEXICON, PredicateClassifier } from '../core/fact-lexicon.js';
import { entityScore, entitySpecificity, matchGraph } from './graph-match.js';

/** A person record as a partition holds it. */
const person = (id: string, name: string): GraphEntityInfo => ({
  id,
  name,
  category: 'person',
  description: '',
  aliasKeys: [name.toLowerCase()],
});

it('takes the names a delete left an entity: the memory that gave the old name leaves, the match shows the new one', () => {
  const index = new GraphIndex();
  const partition = index.createPartition('c1');
  const before: GraphEntityInfo = {
    id: 'e1',
    name: 'Ingrid Marit Halvorsen',
    category: 'person',
    description: '',
    aliasKeys: ['ingrid marit halvorsen', 'ingrid halvorsen'],
  };
  const entities = new Map([[before.id, before]]);
  const row = (description: string) => ({ targetId: 'e1', chunkIndex: 0, count: 1, description });
  partition.setMemory('first', [row('the first memory')], entities, new Map());
  partition.setMemory('second', [row('the second memory')], entities, new Map());
  assert.deepEqual(index.entityIdsOf('first'), ['e1']);

  index.removeMemory('first');
  assert.ok(index.holdsEntity('e1'), 'the second memory still backs it');
  index.refreshRecords([{ ...before, name: 'Ingrid Halvorsen', aliasKeys: ['ingrid halvorsen'] }]);
  const matched = matchGraph([partition], ['ingrid halvorsen']);
  assert.deepEqual(
    matched.entities.map((entity) => entity.name),
    ['Ingrid Halvorsen'],
  );
  assert.equal(matchGraph([partition], ['ingrid marit halvorsen']).entities.length, 0, 'the lost alias no longer matches');

  index.refreshRecords([{ ...before, id: 'e2' }]);
  assert.equal(index.holdsEntity('e2'), false, 'an entity no partition holds is not added');
});

it('takes the description a delete gave a fact other memories still state, and adds no fact it does not hold', () => {
  const index = new GraphIndex();
  const partition = index.createPartition('c1');
  const entities = new Map([
    ['e1', person('e1', 'Ana Lima')],
    ['e2', person('e2', 'Rui Costa')],
  ]);
  const fact = {
    id: 'f1',
    subjectId: 'e1',
    objectId: 'e2',
    predicate: 'know',
    description: 'Ana Lima met Rui Costa in Quarnvik.',
    confidence: 1,
  };
  const facts = new Map([[fact.id, fact]]);
  const rows = [
    { targetId: 'e1', chunkIndex: 0, count: 1, description: '' },
    { targetId: 'e2', chunkIndex: 0, count: 1, description: '' },
    { targetId: 'f1', chunkIndex: 0, count: 1, description: '' },
  ];
  partition.setMemory('m2', rows, entities, facts);
  assert.ok(index.holdsFact('f1'));
  index.refreshRecords(
    [],
    [
      { ...fact, description: 'Ana Lima knows Rui Costa.' },
      { ...fact, id: 'f2' },
    ],
  );
  const described = matchGraph([partition], ['ana lima']).relationships.map((relationship) => relationship.description);
  assert.deepEqual(described, ['Ana Lima knows Rui Costa.']);
  assert.equal(index.holdsFact('f2'), false, 'a fact no partition holds is not added');
});

it('merges rows naming one target in one chunk, set one by one or in bulk, and never changes the rows it was given', () => {
  const entities = new Map([
    ['e1', person('e1', 'Ana Lima')],
    ['e2', person('e2', 'Rui Costa')],
  ]);
  const fact = { id: 'f1', subjectId: 'e1', objectId: 'e2', predicate: 'moved to', description: '', confidence: 1 };
  const facts = new Map([[fact.id, fact]]);
  const june = new Date(Date.UTC(2024, 5, 1));
  // Frozen: a partition that summed into a row it holds would throw here (modules are strict).
  const rows: ProvenanceRow[] = [
    { targetId: 'e1', chunkIndex: 0, count: 2, description: '' },
    { targetId: 'e2', chunkIndex: 0, count: 1, description: 'Rui' },
    { targetId: 'e1', chunkIndex: 0, count: 3, description: 'Ana, twice' },
    { targetId: 'f1', chunkIndex: 1, count: 1, description: 'moved', validFrom: june, validTo: null },
    { targetId: 'f1', chunkIndex: 1, count: 1, description: 'again', validFrom: null },
    { targetId: 'e1', chunkIndex: 1, count: 1, description: 'Ana once' },
  ].map((row) => Object.freeze(row));
  const given = structuredClone(rows);
  const one = new GraphPartition();
  one.setMemory('m1', rows, entities, facts);
  const bulk = GraphPartition.fromState({ entities: [...entities.values()], facts: [fact], memories: [{ memoryId: 'm1', rows }] });
  const classifier = new PredicateClassifier(DEFAULT_FACT_LEXICON);
  for (const partition of [one, bulk]) {
    assert.equal(partition.weightOf('e1'), 6);
    assert.equal(partition.weightOf('f1'), 2);
    assert.equal(partition.descriptionIn('e1', 'm1:0'), 'Ana, twice', 'the first description that says something');
    assert.equal(partition.descriptionIn('f1', 'm1:1'), 'moved');
    const mentioning: string[] = [];
    partition.forEachChunkMentioning('e1', (chunk) => mentioning.push(chunk));
    assert.deepEqual(mentioning, ['m1:0', 'm1:1']);
    const [timeline] = partition.timelineFactsOf('e1');
    assert.deepEqual(timeline!.rows, [{ memoryId: 'm1', validFrom: june, validTo: null }], "the first row's validity");
  }
  assert.deepEqual(bulk.timelines(['f1'], classifier), one.timelines(['f1'], classifier));
  assert.deepEqual(matchGraph([bulk], ['ana lima']), matchGraph([one], ['ana lima']));
  one.removeMemory('m1');
  assert.equal(one.weightOf('e1'), 0);
  assert.equal(one.entityCount, 0);
  assert.deepEqual(rows, given, 'the rows are as they were given');
});

describe('entity specificity: a matched entity lends by how few of its partition’s chunks mention it', () => {
  const caroline = person('speaker', 'Caroline');
  const lisbon: GraphEntityInfo = { id: 'place', name: 'Lisbon', category: 'place', description: '', aliasKeys: ['lisbon'] };
  const records = new Map([
    [caroline.id, caroline],
    [lisbon.id, lisbon],
  ]);
  const row = (targetId: string, count: number) => ({ targetId, chunkIndex: 0, count, description: '' });
  /** Ten one-chunk memories: Caroline once in each, Lisbon ten times in the first: the same mentions in all. */
  const conversation = (): GraphPartition => {
    const partition = new GraphPartition();
    for (let turn = 0; turn < 10; turn++)
      partition.setMemory(`m${turn}`, turn === 0 ? [row('speaker', 1), row('place', 10)] : [row('speaker', 1)], records, new Map());
    return partition;
  };
  const scores = (partition: GraphPartition): Map<string, number> =>
    new Map(matchGraph([partition], ['caroline', 'lisbon']).entities.map((entity) => [entity.name, entity.score]));

  it('is 1 for an entity one chunk names, falls with the chunks that name it, and never reaches 0', () => {
    assert.equal(entitySpecificity(1, 400), 1);
    assert.equal(entitySpecificity(1, 1), 1, 'a one-chunk collection still ranks by what it names');
    assert.ok(entitySpecificity(10, 400) < entitySpecificity(2, 400));
    assert.ok(entitySpecificity(400, 400) > 0);
    assert.ok(Math.abs(entitySpecificity(400, 400) - Math.log(2) / Math.log(401)) < 1e-12);
    assert.equal(entitySpecificity(5, 3), entitySpecificity(5, 5), 'more chunks naming it than counted: as if it were in all');
  });

  it('lets a speaker named in every turn lend far less than a place named in one, at the same number of mentions', () => {
    const matched = scores(conversation());
    assert.equal(matched.get('Lisbon'), 1, 'the most specific match leads');
    assert.ok(matched.get('Caroline')! < 0.05, `Caroline scores ${matched.get('Caroline')}`);
    const { chunks } = matchGraph([conversation()], ['caroline']);
    assert.ok(chunks.get('m1:0')!.value < 0.01, 'a turn that only names the speaker gains almost nothing');
  });

  it('follows adds and deletes: the counts are those of the memories the partition holds now, as a fresh load of them gives', () => {
    const partition = conversation();
    for (let turn = 1; turn < 10; turn++) partition.removeMemory(`m${turn}`);
    const alone = new GraphPartition();
    alone.setMemory('m0', [row('speaker', 1), row('place', 10)], records, new Map());
    assert.deepEqual(scores(partition), scores(alone));
    assert.equal(scores(alone).get('Caroline'), 1, 'named in the only chunk, the speaker is as specific as can be');
    assert.deepEqual(scores(GraphPartition.fromState(conversation().exportState())), scores(conversation()), 'a bulk load counts the same');
    partition.setMemory('m1', [row('speaker', 1)], records, new Map());
    assert.ok(scores(partition).get('Caroline')! < scores(alone).get('Caroline')!, 'a new turn naming the speaker lowers its specificity');
  });

  it('weighs the score by category, mentions and specificity (entityScore)', () => {
    assert.equal(entityScore('person', 1, 1, 100, 0), 1 / (1 + Math.log(2)), 'power 0: the mention damping alone, as before');
    assert.equal(entityScore('concept', 1, 1, 100), 0.5 / (1 + Math.log(2)));
    assert.ok(entityScore('person', 10, 10, 100) < entityScore('person', 10, 1, 100));
  });
});

describe('the targets of a chunk and the count of chunks with targets', () => {
  const entities = new Map(['ana', 'rui', 'ines', 'lisbon'].map((id) => [id, person(id, id)]));
  const row = (targetId: string, chunkIndex: number, count = 1): ProvenanceRow => ({
    targetId,
    chunkIndex,
    count,
    description: `${targetId} in ${chunkIndex}`,
  });
  const memories: { memoryId: string; rows: ProvenanceRow[] }[] = [
    // A target twice in a chunk, targets in an order no sort gives, a row of a target no record backs.
    { memoryId: 'm1', rows: [row('rui', 0), row('ana', 0), row('rui', 0, 2), row('lisbon', 2), row('ghost', 3)] },
    { memoryId: 'm2', rows: [row('ana', 1), row('ines', 1), row('ana', 4)] },
    { memoryId: 'm3', rows: [row('lisbon', 0)] },
  ];
  /** What each chunk names and the match's scores: what a search reads of these. */
  const observed = (partition: GraphPartition) => ({
    targets: ['m1:0', 'm1:1', 'm1:2', 'm1:3', 'm2:1', 'm2:4', 'm3:0', 'm9:0', 'm1'].map((chunk) => [chunk, partition.targetsOf(chunk)]),
    scores: matchGraph([partition], ['ana', 'rui', 'lisbon', 'ines']).entities.map((entity) => [entity.id, entity.score]),
  });

  it('are the same set memory by memory, built in bulk, and after memories leave and are set again', () => {
    const incremental = new GraphPartition();
    for (const { memoryId, rows } of memories) incremental.setMemory(memoryId, rows, entities, new Map());
    const built = observed(incremental);
    assert.deepEqual(built.targets, [
      ['m1:0', ['rui', 'ana']],
      ['m1:1', undefined],
      ['m1:2', ['lisbon']],
      ['m1:3', undefined],
      ['m2:1', ['ana', 'ines']],
      ['m2:4', ['ana']],
      ['m3:0', ['lisbon']],
      ['m9:0', undefined],
      ['m1', undefined],
    ]);
    assert.deepEqual(observed(GraphPartition.fromState(incremental.exportState())), built, 'built in bulk');

    // Five chunks name a target: the count entityScore reads.
    const alone = new GraphPartition();
    alone.setMemory('m3', memories[2]!.rows, entities, new Map());
    const specific = matchGraph([alone], ['lisbon']).entities[0]!.score;
    incremental.removeMemory('m2');
    incremental.removeMemory('m1');
    assert.deepEqual(observed(incremental).targets.at(6), ['m3:0', ['lisbon']]);
    assert.equal(matchGraph([incremental], ['lisbon']).entities[0]!.score, specific, 'the count fell with the memories that left');
    assert.deepEqual(incremental.targetsOf('m1:0'), undefined, 'a memory that left names nothing');
    // Set again, with other rows: the chunk's targets are those of the new rows.
    incremental.setMemory('m1', [row('ana', 0)], entities, new Map());
    assert.deepEqual(incremental.targetsOf('m1:0'), ['ana']);
    incremental.setMemory('m1', memories[0]!.rows, entities, new Map());
    incremental.setMemory('m2', memories[1]!.rows, entities, new Map());
    assert.deepEqual(observed(incremental), built, 'the same targets and scores as first built');
  });
});

describe('a partition that many changes went through', () => {
  const entities = new Map(['ana', 'rui', 'ines', 'lisbon', 'porto'].map((id) => [id, person(id, id)]));
  const fact = { id: 'f1', subjectId: 'ana', objectId: 'lisbon', predicate: 'moved to', description: '', confidence: 1 };
  const facts = new Map([[fact.id, fact]]);
  const targets = [...entities.keys(), 'f1', 'ghost'];
  let seed = 11;
  const next = (below: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % below;
  const rowsOf = (): ProvenanceRow[] =>
    Array.from({ length: 1 + next(6) }, () => ({
      targetId: targets[next(targets.length)]!,
      chunkIndex: next(3),
      count: 1 + next(3),
      description: ['', 'said', 'again'][next(3)]!,
    }));

  /** What the rows of the memories held, in the order they were set, say a search should read. */
  const expected = (state: ReturnType<GraphPartition['exportState']>, id: string) => {
    const live = state.memories.map(({ memoryId, rows }) => ({ memoryId, rows: rows.filter((row) => row.targetId !== 'ghost') }));
    const chunks = [
      ...new Set(
        live.flatMap(({ memoryId, rows }) => rows.filter((row) => row.targetId === id).map((row) => `${memoryId}:${row.chunkIndex}`)),
      ),
    ];
    const weight = live.flatMap(({ rows }) => rows).reduce((sum, row) => sum + (row.targetId === id ? row.count : 0), 0);
    const described = (chunk: string) => {
      const [memoryId, index] = chunk.split(':');
      const rows = live.find((memory) => memory.memoryId === memoryId)!.rows;
      return rows.find((row) => row.targetId === id && row.chunkIndex === Number(index) && row.description)?.description ?? '';
    };
    const support = new Map<string, string>();
    for (const chunk of chunks) if (!support.get(chunk.split(':')[0]!)) support.set(chunk.split(':')[0]!, described(chunk));
    return {
      chunks,
      weight,
      descriptions: chunks.map(described),
      support: [...support].map(([memoryId, description]) => ({ memoryId, description })),
    };
  };
  const observed = (partition: GraphPartition, id: string) => {
    const chunks: string[] = [];
    partition.forEachChunkMentioning(id, (chunk, memoryId) => {
      assert.equal(chunk.split(':')[0], memoryId);
      chunks.push(chunk);
    });
    return {
      chunks,
      weight: partition.weightOf(id),
      descriptions: chunks.map((chunk) => partition.descriptionIn(id, chunk)),
      support: partition.support(id, 1000),
    };
  };

  it('reads what its memories hold now, in the order they were set, through thousands of sets and removals', () => {
    const partition = new GraphPartition();
    // About 20,000 mentions leave along the way: the live ones are packed again several times.
    for (let change = 0; change < 8000; change++) {
      const memoryId = `m${next(40)}`;
      if (next(4) === 0) partition.removeMemory(memoryId);
      else partition.setMemory(memoryId, rowsOf(), entities, facts);
      if (change % 1000 !== 999) continue;
      const state = partition.exportState();
      const bulk = GraphPartition.fromState(state);
      for (const id of targets) {
        assert.deepEqual(observed(partition, id), expected(state, id), `${id} after ${change + 1} changes`);
        assert.deepEqual(observed(bulk, id), expected(state, id), `${id} built in bulk after ${change + 1} changes`);
      }
      assert.deepEqual(
        partition.timelineFactsOf('ana'),
        bulk.timelineFactsOf('ana'),
        'the same validity rows, memory by memory, as a fresh build',
      );
    }
    for (let memory = 0; memory < 40; memory++) partition.removeMemory(`m${memory}`);
    assert.equal(partition.entityCount + partition.factCount, 0, 'nothing is left when every memory left');
    assert.deepEqual(observed(partition, 'ana'), { chunks: [], weight: 0, descriptions: [], support: [] });
  });

  it('packs away the slots of memories set again and again whose rows name nothing it holds', () => {
    const partition = new GraphPartition();
    partition.setMemory('kept', [{ targetId: 'ana', chunkIndex: 0, count: 1, description: 'Ana' }], entities, facts);
    const ghost: ProvenanceRow[] = [{ targetId: 'ghost', chunkIndex: 0, count: 1, description: '' }];
    for (let time = 0; time < 10_000; time++) partition.setMemory('churn', ghost, entities, facts);
    partition.setMemory('later', [{ targetId: 'ana', chunkIndex: 1, count: 2, description: '' }], entities, facts);
    assert.ok(partition.hasMemory('churn'), 'a memory whose rows name nothing held is still held');
    assert.deepEqual(
      partition.exportState().memories.map((memory) => memory.memoryId),
      ['kept', 'churn', 'later'],
    );
    assert.deepEqual(observed(partition, 'ana'), {
      chunks: ['kept:0', 'later:1'],
      weight: 3,
      descriptions: ['Ana', ''],
      support: [
        { memoryId: 'kept', description: 'Ana' },
        { memoryId: 'later', description: '' },
      ],
    });
  });
});
