import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { BAD_CONTENT, MEMORY_DELETED } from '../core/failure-types.js';
import { DEFAULT_FACT_LEXICON, PredicateClassifier } from '../core/fact-lexicon.js';
import type { Logger } from '../core/logger.js';
import type { Memory } from '../core/memory-model.js';
import type { FileExtractors } from '../extractors/files.js';
import type { StructureExtractor } from '../extractors/structure/types.js';
import { UnreadableContentError } from '../extractors/types.js';
import type { Embedder } from '../models/embedder.js';
import { fakeIngestionStore, type FakeIngestionStore } from '../test/support/fakes/ingestion.js';
import { createIngestActivities, stagesDoneBefore, type IngestActivities, type StageInput } from './ingest.js';

it("reads from an earlier attempt's last heartbeat how many single-pass stages it finished", () => {
  const cases: [unknown, number][] = [
    [undefined, 0],
    [null, 0],
    ['embed', 0],
    [{ stage: 42 }, 0],
    [{ stage: 'read', current: 0, total: 1 }, 0],
    [{ stage: 'extract', file: 0, current: 3, total: 9 }, 0],
    [{ stage: 'chunk', current: 1, total: 1 }, 1],
    [{ stage: 'structure', current: 4, total: 9 }, 1],
    [{ stage: 'workflows' }, 2],
    [{ stage: 'embed', current: 32, total: 160 }, 3],
    [{ stage: 'complete' }, 0],
  ];
  for (const [details, done] of cases) assert.equal(stagesDoneBefore(details), done, JSON.stringify(details));
});

// ---- the activities under MockActivityEnvironment, over an in-memory store ---------------------------

const TEXTS = ['Alice met Bob in Berlin.', 'Carol met Dave.', 'Erin called Frank.'];
/** The activity context's logger (MockActivityEnvironment's default prints every failure). */
const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as Logger;

/** Capitalised words as person entities: enough structure for the graph stage to write rows. */
const extractor: StructureExtractor = {
  id: 'fake-names',
  extract: async (text) => ({
    entities: [...new Set(text.match(/\b[A-Z][a-z]+/g) ?? [])].map((name) => ({
      key: name.toLowerCase(),
      name,
      category: 'person' as const,
      aliases: [],
      mentions: 1,
      description: text,
    })),
    facts: [],
  }),
};

type EmbedCall = { texts: string[]; signal: AbortSignal | undefined };

function setup(
  options: {
    extract?: FileExtractors['extract'];
    embed?: (call: EmbedCall) => Promise<Float32Array[]> | null;
    /** The structure extractor, or one built over the fake store (to record its calls in the journal). */
    extractor?: StructureExtractor | ((fake: FakeIngestionStore) => StructureExtractor);
  } = {},
) {
  const fake = fakeIngestionStore();
  const embedCalls: EmbedCall[] = [];
  const embedder: Embedder = {
    modelId: 'model-2',
    dimensions: 4,
    embedPassages: (texts, opts) => {
      const call = { texts, signal: opts?.signal };
      embedCalls.push(call);
      return options.embed?.(call) ?? Promise.resolve(texts.map(() => new Float32Array([1, 0, 0, 0])));
    },
    embedQuery: async () => new Float32Array([1, 0, 0, 0]),
  };
  const activities = createIngestActivities({
    store: fake.store,
    embedder: async () => embedder,
    files: {
      extract: options.extract ?? (async () => ({ mediaType: 'text/plain', sections: [], units: 1 })),
      close: async () => undefined,
    },
    logger: silent,
    chunkMaxChars: 1000,
    maxChunksPerMemory: 5,
    embeddingBatchSize: 2,
    embeddingCoalesceMs: 0,
    extractor: typeof options.extractor === 'function' ? options.extractor(fake) : (options.extractor ?? extractor),
    entitySimilarityThreshold: 0.9,
    classifier: new PredicateClassifier(DEFAULT_FACT_LEXICON),
  });
  return { fake, activities, embedCalls };
}

/** One attempt of an activity, its heartbeats recorded in the store's journal between the writes. */
function attempt(fake: FakeIngestionStore, info: { attempt?: number; heartbeatDetails?: unknown } = {}) {
  const env = new MockActivityEnvironment(
    {
      attempt: info.attempt ?? 1,
      heartbeatDetails: info.heartbeatDetails,
      activityId: '1',
      workflowExecution: { workflowId: 'ingest-m1', runId: 'run-1' },
    },
    { logger: quietLogger },
  );
  env.on('heartbeat', (details: unknown) => fake.journal.record('heartbeat', details));
  return env;
}

/** The memory's chunks as a finished read stage left them; `embedded`: the first ones already carry this model's vectors. */
function seedRead(fake: FakeIngestionStore, memory: Memory, embedded: { count: number; model: string } = { count: 0, model: '' }): void {
  TEXTS.forEach((text, index) =>
    fake.chunks.rows.set(`${memory.id}:${index}`, {
      id: `${memory.id}:${index}`,
      memory_id: memory.id,
      tenant_id: memory.tenant_id,
      collection_ids: memory.collection_ids,
      index,
      text,
      source: { type: 'chunk' },
      embedding_model: index < embedded.count ? embedded.model : null,
    }),
  );
  Object.assign(fake.memories.rows.get(memory.id)!, { status: 'reading', chunk_count: TEXTS.length });
}

const failure = (type: string) => (error: unknown) => {
  assert.ok(error instanceof ApplicationFailure, `an ApplicationFailure, not ${String(error)}`);
  assert.equal(error.type, type);
  assert.equal(error.nonRetryable, true, 'not retried');
  return true;
};
const nothingLeft = { chunks: 0, mentions: 0, traces: 0, searchable: false };

describe('readContent: content that can never be read fails once, without retries', () => {
  const file = { file_id: 'f1', filename: 'report.pdf', media_type: 'application/pdf', size: 10, sha256: 'x' };
  // [case, what the extractor does, the failure's message]
  const cases: [string, FileExtractors['extract'], string][] = [
    [
      'an encrypted file names its refusal code',
      () => Promise.reject(new UnreadableContentError('the PDF is encrypted', { code: 'file_encrypted' })),
      'report.pdf: the PDF is encrypted [file_encrypted]',
    ],
    ['a damaged file without a code', () => Promise.reject(new UnreadableContentError('no pages')), 'report.pdf: no pages'],
    [
      'a file with no text at all',
      async () => ({ mediaType: 'application/pdf', sections: [], units: 1 }),
      'the memory has no text content to index',
    ],
    [
      'a file that splits into more chunks than allowed',
      async () => ({
        mediaType: 'text/plain',
        sections: Array.from({ length: 6 }, (_, page) => ({ text: `page ${page}`, page: page + 1 })),
        units: 6,
      }),
      'the content splits into 6 chunks, more than the limit of 5',
    ],
  ];
  for (const [name, extract, message] of cases) {
    it(name, async () => {
      const { fake, activities } = setup({ extract });
      fake.files.seed('f1', 'm1', Buffer.from('%PDF'));
      fake.seedMemory({ id: 'm1', content: { files: [file] } });
      await assert.rejects(attempt(fake).run(activities.readContent, { memoryId: 'm1', tenantId: 'tenant-1' }), (error: unknown) => {
        failure(BAD_CONTENT)(error);
        assert.equal((error as Error).message, message);
        return true;
      });
      assert.equal(fake.chunks.rows.size, 0, 'no chunk written');
    });
  }

  it('lets a passing failure of the extractor through, to be retried', async () => {
    const crash = new Error('OCR worker exited');
    const { fake, activities } = setup({ extract: () => Promise.reject(crash) });
    fake.files.seed('f1', 'm1', Buffer.from('%PDF'));
    fake.seedMemory({ id: 'm1', content: { files: [file] } });
    await assert.rejects(attempt(fake).run(activities.readContent, { memoryId: 'm1', tenantId: 'tenant-1' }), (error) => error === crash);
  });
});

describe('readContent: writes idempotently', () => {
  // [attempt, chunks stored before it]: only a retry can find chunks of an earlier, longer split.
  const cases: [number, number, number][] = [
    [1, 0, 3],
    [2, 5, 3],
  ];
  for (const [number, before, after] of cases) {
    it(`attempt ${number} with ${before} chunks stored ends with the ${after} of the content`, async () => {
      const { fake, activities } = setup();
      const memory = fake.seedMemory({ id: 'm1', content: { chunks: TEXTS } });
      for (let index = 0; index < before; index++)
        fake.chunks.rows.set(`m1:${index}`, {
          id: `m1:${index}`,
          memory_id: 'm1',
          tenant_id: 'tenant-1',
          collection_ids: ['col-a'],
          index,
          text: 'old',
          source: { type: 'chunk' },
          embedding_model: null,
        });
      const read = await attempt(fake, { attempt: number }).run(activities.readContent, { memoryId: 'm1', tenantId: 'tenant-1' });
      assert.deepEqual(read, { chunkCount: 3, collectionIds: memory.collection_ids });
      assert.deepEqual(
        [...fake.chunks.rows.values()].map((chunk) => chunk.text),
        TEXTS,
      );
      assert.equal(fake.memories.row('m1')?.chunk_count, 3);
    });
  }
});

describe('a memory deleted while a stage writes is not brought back', () => {
  // [stage, the write after which the delete lands]
  const cases: [string, string, (activities: IngestActivities, input: StageInput) => Promise<unknown>, boolean][] = [
    [
      'readContent (its chunks written after the delete)',
      'events.appendProgress read',
      (activities, input) => activities.readContent(input),
      false,
    ],
    [
      'extractStructure (a second collection written after the delete)',
      'graph.write',
      (activities, input) => activities.extractStructure(input),
      true,
    ],
    ['deriveWorkflows', 'procedures.replaceMemoryTraces', (activities, input) => activities.deriveWorkflows(input), true],
    ['ingestContent, during structuring', 'graph.write', (activities, input) => activities.ingestContent(input), false],
    [
      'ingestContent, during trace derivation',
      'procedures.replaceMemoryTraces',
      (activities, input) => activities.ingestContent(input),
      false,
    ],
  ];
  for (const [stage, op, run, read] of cases) {
    it(`${stage}: takes back what it wrote and ends as deleted, not retried`, async () => {
      const { fake, activities } = setup();
      const memory = fake.seedMemory({ id: 'm1', collection_ids: ['col-a', 'col-b'], content: { chunks: TEXTS } });
      if (read) seedRead(fake, memory);
      fake.deleteAt(op, 'm1');
      const input = { memoryId: 'm1', tenantId: 'tenant-1', collectionIds: memory.collection_ids };
      await assert.rejects(
        attempt(fake).run(() => run(activities, input)),
        failure(MEMORY_DELETED),
      );
      assert.ok(fake.journal.names().includes('concurrent delete'), 'the delete landed mid-stage');
      assert.deepEqual(fake.derivedOf('m1'), nothingLeft);
      assert.equal(fake.memories.rows.has('m1'), false);
    });
  }

  it('ingestContent: a delete during embedding ends the run as deleted, with nothing left and no completion reported', async () => {
    const { fake, activities } = setup();
    fake.seedMemory({ id: 'm1', content: { chunks: TEXTS } });
    // Before the last batch: the run still tells search about the memory afterwards, then finds it gone.
    fake.deleteAt('chunks.setEmbeddings', 'm1', 2);
    const outcome = await attempt(fake).run(activities.ingestContent, { memoryId: 'm1', tenantId: 'tenant-1' });
    assert.deepEqual(outcome, { status: 'deleted', chunkCount: 0 });
    assert.deepEqual(fake.derivedOf('m1'), nothingLeft);
    assert.ok(!fake.progress.some((event) => event.user_stage === 'complete'));
  });
});

describe('ingestContent: heartbeats let a retry resume where the last attempt got to', () => {
  /** The writes that finish each stage, in stagesDoneBefore's numbering (1 read, 2 structure, 3 derive). */
  const STAGE_WRITES: Record<number, string[]> = {
    1: ['chunks.upsertMany', 'memories.setStatus reading'],
    2: ['graph.write', 'factEvents.announceSupersessions'],
    3: ['procedures.replaceMemoryTraces'],
  };

  it('never claims a stage done in a heartbeat before its writes have landed', async () => {
    const { fake, activities } = setup();
    fake.seedMemory({ id: 'm1', collection_ids: ['col-a', 'col-b'], content: { chunks: TEXTS } });
    const outcome = await attempt(fake).run(activities.ingestContent, { memoryId: 'm1', tenantId: 'tenant-1' });
    assert.deepEqual(outcome, { status: 'complete', chunkCount: 3 });
    const ops = fake.journal.names();
    const lastWrite = (stage: number) => Math.max(...STAGE_WRITES[stage]!.map((op) => ops.lastIndexOf(op)));
    const claimed = new Set<number>();
    fake.journal.entries.forEach((entry, position) => {
      if (entry.at !== 'heartbeat') return;
      const done = stagesDoneBefore(entry.args[0]);
      claimed.add(done);
      for (let stage = 1; stage <= done; stage++)
        assert.ok(
          lastWrite(stage) < position,
          `heartbeat ${JSON.stringify(entry.args[0])} at ${position} claims stage ${stage}, written at ${lastWrite(stage)}`,
        );
    });
    assert.deepEqual([...claimed].sort(), [0, 1, 2, 3], 'every resume point is reached');
  });

  // [last heartbeat of the previous attempt, the stages' writes this attempt makes]
  const cases: [unknown, string[]][] = [
    [undefined, ['chunks.upsertMany', 'graph.write', 'procedures.replaceMemoryTraces', 'chunks.setEmbeddings']],
    [
      { stage: 'extract', file: 0, current: 1, total: 3 },
      ['chunks.upsertMany', 'graph.write', 'procedures.replaceMemoryTraces', 'chunks.setEmbeddings'],
    ],
    [{ stage: 'structure', current: 1, total: 3 }, ['graph.write', 'procedures.replaceMemoryTraces', 'chunks.setEmbeddings']],
    [{ stage: 'workflows' }, ['procedures.replaceMemoryTraces', 'chunks.setEmbeddings']],
    [{ stage: 'embed', current: 2, total: 3 }, ['chunks.setEmbeddings']],
  ];
  for (const [details, writes] of cases) {
    it(`after ${JSON.stringify(details ?? 'no heartbeat')}: redoes ${writes.join(', ')}`, async () => {
      const { fake, activities, embedCalls } = setup();
      const memory = fake.seedMemory({ id: 'm1', content: { chunks: TEXTS } });
      // The earlier attempt read the content and embedded the first batch with the current model.
      seedRead(fake, memory, { count: 2, model: 'model-2' });
      const outcome = await attempt(fake, { attempt: 2, heartbeatDetails: details }).run(activities.ingestContent, {
        memoryId: 'm1',
        tenantId: 'tenant-1',
      });
      assert.deepEqual(outcome, { status: 'complete', chunkCount: 3 });
      const made = new Set(fake.journal.names());
      assert.deepEqual(
        ['chunks.upsertMany', 'graph.write', 'procedures.replaceMemoryTraces', 'chunks.setEmbeddings'].filter((op) => made.has(op)),
        writes,
      );
      // A read stage done again writes every chunk anew (the repository replaces the row, vector
      // included), so all are embedded again; past it, the earlier attempt's vectors are kept.
      assert.deepEqual(
        embedCalls.flatMap((call) => call.texts),
        writes.includes('chunks.upsertMany') ? TEXTS : [TEXTS[2]],
        'chunks embedded by the earlier attempt with this model are kept unless the read stage wrote them again',
      );
    });
  }
});

describe('ingestContent: what the read stage planned feeds the later stages', () => {
  /** The extractor above, each call recorded in the store's journal between the writes. */
  const journaled = (fake: FakeIngestionStore): StructureExtractor => ({
    id: 'fake-names-journaled',
    extract: (text, options) => {
      fake.journal.record('extract', text);
      return extractor.extract(text, options);
    },
  });
  // [the earlier attempt's last heartbeat (none: a first run), the stages' re-reads of the chunks,
  //  whether the chunks are extracted before they are written]
  const cases: [unknown, number, boolean][] = [
    [undefined, 0, true],
    [{ stage: 'structure', current: 1, total: 3 }, 1, false],
  ];
  for (const [details, reads, early] of cases) {
    it(`after ${JSON.stringify(details ?? 'no earlier attempt')}: ${reads} read(s) of the chunks, ${early ? 'extracted before they are written' : 'extracted as stored'}`, async () => {
      const { fake, activities } = setup({ extractor: journaled });
      const memory = fake.seedMemory({ id: 'm1', content: { chunks: TEXTS } });
      if (details) seedRead(fake, memory);
      let chunkReads = 0;
      const forMemory = fake.chunks.forMemory.bind(fake.chunks);
      fake.chunks.forMemory = (memoryId: string) => {
        chunkReads += 1;
        return forMemory(memoryId);
      };
      const outcome = await attempt(fake, { attempt: details ? 2 : 1, heartbeatDetails: details }).run(activities.ingestContent, {
        memoryId: 'm1',
        tenantId: 'tenant-1',
      });
      assert.deepEqual(outcome, { status: 'complete', chunkCount: 3 });
      assert.equal(chunkReads, reads);
      const ops = fake.journal.names();
      const extracted = fake.journal.entries.filter((entry) => entry.at === 'extract').map((entry) => entry.args[0]);
      assert.deepEqual(extracted, TEXTS, 'each chunk extracted once, in order');
      const written = ops.indexOf('chunks.upsertMany');
      if (early) assert.ok(written > ops.lastIndexOf('extract'), `extraction handed over before the write (${ops.join(', ')})`);
      else assert.equal(written, -1, 'the read stage is not done again');
      assert.ok(ops.indexOf('graph.write') > ops.lastIndexOf('extract'));
    });
  }
});

describe('ingestContent: the chunks end with the collections the memory has when it completes', () => {
  // [what an update did while structuring ran, whether the run writes the chunks' collections]
  const cases: [string, 'none' | 'memory' | 'memory and chunks', boolean][] = [
    ['no update', 'none', false],
    ['an update moved the memory, its chunks not yet', 'memory', true],
    // The run compares with the chunks as it wrote them: it writes the same collections again.
    ['an update moved the memory and its chunks', 'memory and chunks', true],
  ];
  for (const [name, moved, writes] of cases) {
    it(`${name}: ${writes ? 'writes them' : 'nothing to write'}`, async () => {
      const { fake, activities } = setup();
      fake.seedMemory({ id: 'm1', collection_ids: ['col-a'], content: { chunks: TEXTS } });
      fake.journal.after = (written) => {
        if (written !== 'graph.write' || moved === 'none') return;
        fake.journal.after = null;
        fake.memories.rows.get('m1')!.collection_ids = ['col-b'];
        if (moved === 'memory and chunks') for (const row of fake.chunks.rows.values()) row.collection_ids = ['col-b'];
      };
      const outcome = await attempt(fake).run(activities.ingestContent, { memoryId: 'm1', tenantId: 'tenant-1' });
      assert.deepEqual(outcome, { status: 'complete', chunkCount: 3 });
      assert.equal(fake.journal.names().includes('chunks.setCollections'), writes);
      const expected = moved === 'none' ? ['col-a'] : ['col-b'];
      for (const row of fake.chunks.rows.values()) assert.deepEqual(row.collection_ids, expected);
    });
  }
});

describe('cancellation stops the model work', () => {
  // The timeout only guards the suite against a hang if the abort is not passed on.
  it(
    'ingestContent: the first batch, embedded while structuring, is aborted and the memory is not completed',
    { timeout: 10_000 },
    async () => {
      const { fake, activities, embedCalls } = setup({
        embed: (call) =>
          call.signal
            ? new Promise((_resolve, reject) => call.signal!.addEventListener('abort', () => reject(new Error('aborted')), { once: true }))
            : null,
      });
      fake.seedMemory({ id: 'm1', content: { chunks: TEXTS } });
      const env = attempt(fake);
      const run = env.run(activities.ingestContent, { memoryId: 'm1', tenantId: 'tenant-1' });
      await eventually(() => embedCalls.length === 1);
      env.cancel('CANCELLED');
      await assert.rejects(run);
      assert.equal(embedCalls[0]?.signal?.aborted, true);
      assert.notEqual(fake.memories.row('m1')?.status, 'complete');
      assert.ok(!fake.progress.some((event) => event.user_stage === 'complete'));
    },
  );

  it('embedAndIndex: stops between batches', async () => {
    // The first batch's model call is where the workflow's cancellation arrives.
    const running: { env?: MockActivityEnvironment } = {};
    const { fake, activities, embedCalls } = setup({
      embed: () => {
        running.env?.cancel('CANCELLED');
        return null;
      },
    });
    const memory = fake.seedMemory({ id: 'm1', content: { chunks: TEXTS } });
    seedRead(fake, memory);
    const env = (running.env = attempt(fake));
    await assert.rejects(env.run(activities.embedAndIndex, { memoryId: 'm1', tenantId: 'tenant-1', collectionIds: ['col-a'] }));
    assert.equal(embedCalls.length, 1, 'one batch of two, not the second');
    assert.equal(fake.memories.row('m1')?.status, 'indexing');
  });
});

/** Polls a condition a few ms at a time (microtask-driven fakes settle quickly). */
async function eventually(condition: () => boolean): Promise<void> {
  for (let tries = 0; !condition(); tries++) {
    if (tries > 200) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('ingestContent: supersessions', () => {
  it('replays only the subjects given a fact whose predicate may have a class', async () => {
    const person = (key: string, name: string) => ({ key, name, category: 'person' as const, aliases: [], mentions: 1, description: name });
    const stated = (subjectKey: string, predicate: string, objectKey: string) => ({
      subjectKey,
      predicate,
      objectKey,
      confidence: 0.9,
      description: `${subjectKey} ${predicate} ${objectKey}`,
    });
    const withFacts: StructureExtractor = {
      id: 'fake-facts',
      extract: async () => ({
        entities: [person('alice', 'Alice'), person('acme', 'Acme'), person('bob', 'Bob'), person('pizza', 'Pizza')],
        // "like" is no class's under any object: Bob's timeline cannot change, so it is not read.
        facts: [stated('alice', 'work at', 'acme'), stated('bob', 'like', 'pizza')],
      }),
    };
    const { fake, activities } = setup({ extractor: withFacts });
    fake.seedMemory({ id: 'm1', content: { chunks: ['Alice works at Acme. Bob likes pizza.'] } });
    const outcome = await attempt(fake).run(activities.ingestContent, { memoryId: 'm1', tenantId: 'tenant-1' });
    assert.deepEqual(outcome, { status: 'complete', chunkCount: 1 });
    const employer = [...fake.graph.facts.values()].find((fact) => fact.predicate === 'work at')!;
    assert.equal(fake.graph.facts.size, 2);
    assert.deepEqual(fake.factEvents.announced, [
      { memoryId: 'm1', collectionId: 'col-a', subjectIds: [employer.subjectId], predicates: ['work at'] },
    ]);
  });
});
