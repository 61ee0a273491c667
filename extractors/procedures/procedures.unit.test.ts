import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chainTraces, MAX_CASE_MEMORIES, type ChainTrace } from './chaining.js';
import { deriveTraces } from './derive.js';
import { extractChunkStructure, extractParsedChunk } from '../structure/local-extractor.js';
import { classifyVerb, VERB_CLASSES } from './lexicon.js';
import {
  align,
  alignmentCount,
  editDistance,
  LINK_DISTANCE,
  MAX_PATTERNS,
  minePatterns,
  patternStats,
  SignatureIndex,
  signatureOf,
  type MiningInstance,
} from './mining.js';

const MEMORY_TIME = new Date('2026-11-18T10:00:00Z'); // a Wednesday

describe('verb lexicon', () => {
  it('maps paraphrases to one class and tries phrasal verbs first', () => {
    const cases: [string, string | undefined, string][] = [
      ['submit', undefined, 'submit'],
      ['file', undefined, 'submit'],
      ['send', 'in', 'submit'],
      ['sign', 'off', 'approve'],
      ['sign', undefined, 'sign'],
      ['reimburse', undefined, 'pay'],
      ['dispatch', undefined, 'ship'],
      ['resolve', undefined, 'complete'],
    ];
    for (const [lemma, particle, expected] of cases)
      assert.equal(classifyVerb(lemma, particle)?.verbClass, expected, `${lemma} ${particle ?? ''}`);
    assert.equal(classifyVerb('hike'), null);
    assert.equal(
      deriveTraces({ memoryTime: MEMORY_TIME, chunks: [{ index: 0, text: 'I sent in the form.' }], entities: [] })[0]?.verbClass,
      'submit',
    );
    assert.ok(VERB_CLASSES.includes('escalate'));
  });
});

describe('trace derivation', () => {
  const entities = [
    { id: 'user', key: 'user', name: 'user', aliases: [] },
    { id: 'report', key: 'expense report', name: 'expense report', aliases: [] },
    { id: 'carol', key: 'carol', name: 'Carol', aliases: [] },
  ];
  const derive = (texts: { text: string; role?: string }[]) =>
    deriveTraces({ memoryTime: MEMORY_TIME, chunks: texts.map((chunk, index) => ({ index, ...chunk })), entities });

  it('finds steps, their classes, subjects, states and entities, and skips small talk', () => {
    const traces = derive([
      { text: 'Hi! How was your weekend? I went hiking. I submitted the expense report on Monday.', role: 'user' },
      { text: 'The manager approved it yesterday.', role: 'assistant' },
      { text: 'Finance reimbursed me on Friday.', role: 'user' },
    ]);
    assert.deepEqual(
      traces.map((trace) => trace.verbClass),
      ['submit', 'approve', 'pay'],
    );
    assert.deepEqual(traces[0]!.actingEntityIds, ['user']);
    assert.deepEqual(traces[0]!.affectedEntityIds, ['report']);
    assert.equal(traces[0]!.afterState, 'expense report submitted');
    assert.equal(traces[1]!.afterState, 'expense report approved', '"it" continues the subject');
    assert.equal(traces[1]!.beforeState, 'expense report submitted');
    assert.deepEqual(traces[1]!.affectedEntityIds, ['report']);
    assert.deepEqual(traces[2]!.affectedEntityIds, ['user']);
    for (const trace of traces) assert.ok(trace.extractionConfidence > 0 && trace.extractionConfidence <= 1);
  });

  it('raises confidence for "after that", "afterwards" and "next" as step markers; "next" alone is no future date', () => {
    const confidence = (text: string) => derive([{ text }])[0]!.extractionConfidence;
    const plain = confidence('The manager approved the report.');
    for (const marked of [
      'After that, the manager approved the report.',
      'Afterwards the manager approved the report.',
      'Next, the manager approved the report.',
    ])
      assert.equal(confidence(marked), Math.round((plain + 0.05) * 100) / 100, marked);
    const monday = derive([{ text: 'Next, the manager approved the report on Monday.' }])[0]!;
    assert.equal(monday.occurredAt.toISOString().slice(0, 10), '2026-11-16', 'the Monday before the memory');
    const ahead = derive([{ text: 'The manager will approve the report next Monday.' }])[0]!;
    assert.equal(ahead.occurredAt.toISOString().slice(0, 10), '2026-11-23');
  });

  it('reads a numbered runbook as imperative steps', () => {
    const traces = derive([
      {
        text: 'Deployment runbook\n\n1. Review the release notes.\n2. Approve the change request.\n3. Deploy the release to production.\n4. Notify the support team.',
      },
    ]);
    assert.deepEqual(
      traces.map((trace) => trace.verbClass),
      ['review', 'approve', 'deploy', 'notify'],
    );
    assert.equal(traces[2]!.afterState, 'release deployed');
  });

  it('resolves explicit dates against the memory time in conversation order, else uses the memory time', () => {
    const traces = derive([
      {
        text: 'I submitted the expense report on Monday. The manager approved it yesterday. Finance paid me on Friday. Carol closed the case.',
      },
    ]);
    assert.equal(traces[0]!.occurredAt.toISOString(), '2026-11-16T10:00:00.000Z');
    assert.equal(traces[0]!.occurredAtSource, 'explicit');
    assert.equal(traces[1]!.occurredAt.toISOString(), '2026-11-17T10:00:00.000Z');
    // The Friday before the memory is before Tuesday: conversation order puts it after.
    assert.equal(traces[2]!.occurredAt.toISOString(), '2026-11-20T10:00:00.000Z');
    assert.equal(traces[3]!.occurredAtSource, 'memory_time');
    assert.equal(traces[3]!.occurredAt.toISOString(), MEMORY_TIME.toISOString());
    const lastWeek = derive([{ text: 'Finance paid me last week.' }]);
    assert.equal(lastWeek[0]!.occurredAt.toISOString(), '2026-11-11T10:00:00.000Z');
    const iso = derive([{ text: 'The warehouse dispatched the parcel on 2026-03-04.' }]);
    assert.equal(iso[0]!.occurredAt.toISOString().slice(0, 10), '2026-03-04');
  });

  it('handles numbered runbook steps, phrasal verbs, passives and case identifiers; skips negations and questions', () => {
    const traces = derive([
      { text: '1. Open a ticket in the portal.\n2. Then escalate it to the on-call engineer.\n3. Finally, close the ticket.' },
      {
        text: 'Carol filed the request and Dave signed off on it. I did not approve the budget. Can you approve the order? Ticket #4521 was closed by Dana.',
      },
    ]);
    assert.deepEqual(
      traces.map((trace) => trace.verbClass),
      ['create', 'escalate', 'complete', 'submit', 'approve', 'complete'],
    );
    assert.equal(traces[1]!.afterState, 'ticket escalated');
    assert.equal(traces[4]!.verbLemma, 'sign off');
    assert.equal(traces[4]!.afterState, 'request approved', '"signed off on it" continues the request');
    assert.deepEqual(traces[3]!.actingEntityIds, ['carol']);
    assert.deepEqual(traces[5]!.caseKeys, ['ticket 4521']);
    assert.equal(traces[5]!.afterState, 'ticket 4521 completed');
  });
});

describe("trace derivation from the structure extractor's parse", () => {
  it('gives the same traces from the shared parse as from its own, and the extractor the same structure', () => {
    const texts = [
      'Hi! How was your weekend? I went hiking. I submitted the expense report on Monday.',
      'Deployment runbook\n\n1. Review the release notes.\n2. Approve the change request.\n3. Deploy the release to production.',
      'Carol filed the request and Dave signed off on it. I did not approve the budget. Ticket #4521 was closed by Dana.',
      '# Notes\n\n```\nconst x = run(y);\n```\nThe warehouse dispatched the parcel on 2026-03-04. Finance paid me last week.',
      'My favourite programming language is Rust. Alice Smith manages the Berlin office; she moved to Lisbon in 2023.',
      '',
    ];
    const chunks = texts.map((text, index) => ({ index, text, role: index % 2 === 0 ? 'user' : 'assistant' }));
    const entities = [
      { id: 'user', key: 'user', name: 'user', aliases: [] },
      { id: 'carol', key: 'carol', name: 'Carol', aliases: [] },
    ];
    const parsed = chunks.map((chunk) => extractParsedChunk(chunk.text, { speaker: chunk.role }));
    for (const [index, chunk] of chunks.entries()) {
      assert.ok(parsed[index]!.sentences, "a chunk within the extractor's input limit hands back its parse");
      assert.deepEqual(parsed[index]!.structure, extractChunkStructure(chunk.text, { speaker: chunk.role }));
    }
    const own = deriveTraces({ memoryTime: MEMORY_TIME, chunks, entities });
    const shared = deriveTraces({
      memoryTime: MEMORY_TIME,
      chunks: chunks.map((chunk, index) => ({ ...chunk, sentences: parsed[index]!.sentences })),
      entities,
    });
    assert.ok(own.length >= 8);
    assert.deepEqual(shared, own);
  });

  it('hands back no parse for a text longer than the extractor reads', () => {
    assert.equal(extractParsedChunk('Alice approved the report. '.repeat(1000)).sentences, null);
  });
});

describe('chaining rule', () => {
  const trace = (id: string, memoryId: string, memoryTime: number, seq: number, caseKeys: string[] = []): ChainTrace => ({
    id,
    memoryId,
    memoryTime,
    seq,
    caseKeys,
    subject: '',
    verbClass: 'review',
  });

  it('keeps a memory in one chain, splits it by case identifiers and joins memories that share one', () => {
    const instances = chainTraces([
      trace('a1', 'A', 1, 0),
      trace('a2', 'A', 1, 1),
      trace('b1', 'B', 2, 0, ['order 1']),
      trace('b2', 'B', 2, 1, ['order 2']),
      trace('b3', 'B', 2, 2),
      trace('c1', 'C', 3, 0, ['order 1']),
    ]);
    const byRoot = new Map(instances.map((instance) => [instance.id, instance.traceIds]));
    assert.deepEqual(byRoot.get('a1'), ['a1', 'a2']);
    assert.deepEqual(byRoot.get('b1'), ['b1', 'c1']);
    assert.deepEqual(byRoot.get('b2'), ['b2', 'b3']);
    assert.equal(instances.length, 3);
  });

  it('re-roots an instance when its first memory is gone', () => {
    const instances = chainTraces([trace('c1', 'C', 3, 0, ['order 1']), trace('d1', 'D', 4, 0, ['order 1'])]);
    assert.deepEqual(instances, [{ id: 'c1', traceIds: ['c1', 'd1'] }]);
  });
});

describe('chaining rule 4: the same subject across memories, without a case identifier', () => {
  const DAY = 86_400_000;
  const step = (memoryId: string, day: number, seq: number, verbClass: string, subject: string, caseKeys: string[] = []): ChainTrace => ({
    id: `${memoryId}${seq}`,
    memoryId,
    memoryTime: day * DAY,
    seq,
    caseKeys,
    subject,
    verbClass,
  });
  const report = 'expense report';
  // [case, traces, expected instances (trace ids, root first)]
  const cases: [string, ChainTrace[], string[][]][] = [
    ['a later step on the same subject continues', [step('A', 1, 0, 'submit', report), step('B', 2, 0, 'approve', report)], [['A0', 'B0']]],
    [
      'a continuation can be continued, across three memories',
      [step('A', 1, 0, 'submit', report), step('B', 2, 0, 'approve', report), step('C', 3, 0, 'pay', report)],
      [['A0', 'B0', 'C0']],
    ],
    ['the same step again is a new case', [step('A', 1, 0, 'submit', report), step('B', 2, 0, 'submit', report)], [['A0'], ['B0']]],
    ['an earlier stage is a new case', [step('A', 1, 0, 'approve', report), step('B', 2, 0, 'submit', report)], [['A0'], ['B0']]],
    ['a completed chain is closed', [step('A', 1, 0, 'complete', report), step('B', 2, 0, 'notify', report)], [['A0'], ['B0']]],
    ['a cancelled chain is closed', [step('A', 1, 0, 'cancel', report), step('B', 2, 0, 'complete', report)], [['A0'], ['B0']]],
    ['another subject is another case', [step('A', 1, 0, 'submit', report), step('B', 2, 0, 'approve', 'invoice')], [['A0'], ['B0']]],
    ['no subject, no link', [step('A', 1, 0, 'submit', ''), step('B', 2, 0, 'approve', '')], [['A0'], ['B0']]],
    ['beyond the window', [step('A', 1, 0, 'submit', report), step('B', 16, 0, 'approve', report)], [['A0'], ['B0']]],
    ['at the window’s edge', [step('A', 1, 0, 'submit', report), step('B', 15, 0, 'approve', report)], [['A0', 'B0']]],
    [
      'a numbered chain does not join by subject',
      [step('A', 1, 0, 'submit', report), step('B', 2, 0, 'approve', report, ['report 7'])],
      [['A0'], ['B0']],
    ],
    [
      'the most recent open chain that fits wins',
      [step('A', 1, 0, 'submit', report), step('B', 2, 0, 'submit', report), step('C', 3, 0, 'approve', report)],
      [['A0'], ['B0', 'C0']],
    ],
    [
      'a more recent chain already further along is passed over',
      [
        step('A', 1, 0, 'submit', report),
        step('B', 2, 0, 'submit', report),
        step('B', 2, 1, 'approve', report),
        step('B', 2, 2, 'pay', report),
        step('C', 3, 0, 'approve', report),
      ],
      [
        ['A0', 'C0'],
        ['B0', 'B1', 'B2'],
      ],
    ],
    [
      'a step acting on someone in between does not hide the subject',
      [step('A', 1, 0, 'sign', 'onboarding plan'), step('A', 1, 1, 'train', 'bob'), step('B', 2, 0, 'complete', 'onboarding plan')],
      [['A0', 'A1', 'B0']],
    ],
    [
      'the chain is judged where it stands at the first step, the last step of the other memory',
      [step('A', 1, 0, 'submit', report), step('A', 1, 1, 'review', report), step('B', 2, 0, 'review', report)],
      [['A0', 'A1'], ['B0']],
    ],
  ];
  for (const [name, traces, expected] of cases) {
    it(name, () => {
      const shuffled = [...traces].reverse();
      assert.deepEqual(
        chainTraces(shuffled).map((instance) => instance.traceIds),
        expected,
      );
    });
  }
});

describe('pattern mining', () => {
  it('collapses repeats and measures reorderings and optional steps as one edit', () => {
    assert.deepEqual(signatureOf(['submit', 'approve', 'approve', 'pay']), ['submit', 'approve', 'pay']);
    assert.equal(editDistance(['a', 'c', 'b', 'd'], ['a', 'b', 'c', 'd']), 1);
    assert.equal(editDistance(['a', 'b', 'd'], ['a', 'b', 'c', 'd']), 1);
  });

  it('places a running instance at its step of the pattern', () => {
    const pattern = ['submit', 'review', 'approve', 'pay'];
    assert.deepEqual(align(['submit', 'review', 'approve'], pattern), { distance: 0, step: 3, of: 4 });
    assert.equal(align(pattern, pattern).step, 4);
    assert.equal(align(['submit', 'approve'], pattern).step, 3, 'an optional step skipped');
  });

  it('recovers planted processes with variants as the most confident patterns, and leaves one-offs out', () => {
    const instances: MiningInstance[] = [];
    const add = (signature: string[], count: number) => {
      for (let i = 0; i < count; i++) {
        instances.push({
          id: `${signature.join('-')}#${instances.length}`,
          signature,
          lastActivityAt: instances.length * 1000,
          evidence: 0.8,
        });
      }
    };
    add(['submit', 'review', 'approve', 'pay'], 6);
    add(['submit', 'approve', 'pay'], 3); // optional review
    add(['submit', 'review'], 2); // still running
    add(['create', 'assign', 'escalate', 'complete'], 5);
    add(['create', 'escalate', 'assign', 'complete'], 2); // reordered
    add(['schedule', 'notify'], 1);
    add(['refund', 'cancel', 'update'], 1);
    const patterns = minePatterns(instances);
    assert.equal(patterns.length, 2);
    assert.deepEqual(patterns[0]!.signature, ['submit', 'review', 'approve', 'pay']);
    assert.equal(patterns[0]!.members.length, 11);
    assert.deepEqual(patterns[1]!.signature, ['create', 'assign', 'escalate', 'complete']);
    assert.equal(patterns[1]!.members.length, 7);
    const running = patterns[0]!.members.find((member) => member.id.startsWith('submit-review#'))!;
    assert.equal(running.step, 2);
    assert.ok(patterns[0]!.stats.confidence > patterns[1]!.stats.confidence);
    assert.ok(patterns.every((pattern) => pattern.stats.confidence > 0 && pattern.stats.confidence <= 1));
  });

  it('computes confidence from recurrence, cohesion and evidence', () => {
    const member = (id: string, distance: number) => ({ id, distance, step: 2, evidence: 1, lastActivityAt: 0 });
    const two = patternStats([member('a', 0), member('b', 0)], 0);
    const ten = patternStats(
      Array.from({ length: 10 }, (_, index) => member(String(index), 0)),
      0,
    );
    assert.ok(ten.confidence > two.confidence);
    assert.equal(two.confidence, Math.round((1 - Math.exp(-1 / 3)) * 10_000) / 10_000);
    assert.equal(ten.weightedFrequency, 10);
    const loose = patternStats([member('a', 0.4), member('b', 0.4)], 0);
    assert.ok(loose.confidence < two.confidence);
  });
});

describe('case identifiers are identifier-shaped', () => {
  const keysOf = (text: string): string[] =>
    deriveTraces({ memoryTime: MEMORY_TIME, chunks: [{ index: 0, text }], entities: [] }).flatMap((trace) => trace.caseKeys);
  // [sentence, the case keys it must yield]
  const cases: [string, string[]][] = [
    ['I paid $100 for the lamp.', []],
    ['The call was scheduled for 2 pm.', []],
    ['We scheduled the demo at 3pm.', []],
    ['We deployed v2 of the app.', []],
    ['The manager approved 2 requests.', []],
    ['I paid 100 dollars.', []],
    ['They shipped 25% of the parts.', []],
    ['We reviewed the 2nd draft.', []],
    ['I reviewed page 3 of the contract.', []],
    ['I ordered 1182.', []],
    ['I submitted order 1182.', ['order 1182']],
    ['Ticket #4521 was closed by Dana.', ['ticket 4521']],
    ['I paid invoice INV-2231.', ['inv-2231']],
    ['The warehouse shipped PO77A.', ['po77a']],
  ];
  for (const [text, expected] of cases) {
    it(`"${text}" → ${JSON.stringify(expected)}`, () => assert.deepEqual(keysOf(text), expected));
  }

  it('1,000 memories each mentioning "2 pm" or "$100" do not form one instance', () => {
    const texts = ['I scheduled the call for 2 pm.', 'I paid $100 for the lamp.'];
    const traces: ChainTrace[] = [];
    for (let memory = 0; memory < 1000; memory++) {
      const drafts = deriveTraces({ memoryTime: MEMORY_TIME, chunks: [{ index: 0, text: texts[memory % 2]! }], entities: [] });
      for (const draft of drafts) {
        traces.push({
          id: `m${memory}-${draft.seq}`,
          memoryId: `m${memory}`,
          memoryTime: MEMORY_TIME.getTime() + memory * 86_400_000,
          seq: draft.seq,
          caseKeys: draft.caseKeys,
          subject: draft.subject,
          verbClass: draft.verbClass,
        });
      }
    }
    assert.equal(traces.length, 1000);
    const largest = Math.max(...chainTraces(traces).map((instance) => instance.traceIds.length));
    assert.ok(largest <= 2, `largest instance has ${largest} traces`);
  });
});

describe('instance size cap', () => {
  it('a case key shared by more memories than MAX_CASE_MEMORIES joins none of them', () => {
    const shared = (count: number): ChainTrace[] =>
      Array.from({ length: count }, (_, memory) => ({
        id: `t${memory}`,
        memoryId: `m${memory}`,
        memoryTime: memory,
        seq: 0,
        caseKeys: ['order 1182'],
        subject: '',
        verbClass: 'review',
      }));
    assert.equal(chainTraces(shared(MAX_CASE_MEMORIES)).length, 1, 'up to the cap, one instance');
    const over = chainTraces(shared(MAX_CASE_MEMORIES + 1));
    assert.equal(over.length, MAX_CASE_MEMORIES + 1, 'past it, the key is too common to be a case');
  });
});

describe('mining cost', () => {
  /** Deterministic pseudo-random signatures over the verb classes (no two adjacent alike). */
  function distinctSignatures(count: number, seed: number): string[][] {
    let state = seed;
    const next = () => (state = (state * 48_271) % 2_147_483_647) / 2_147_483_647;
    const seen = new Set<string>();
    const out: string[][] = [];
    while (out.length < count) {
      const length = 3 + Math.floor(next() * 6);
      const signature: string[] = [];
      while (signature.length < length) {
        const verbClass = VERB_CLASSES[Math.floor(next() * VERB_CLASSES.length)]!;
        if (signature[signature.length - 1] !== verbClass) signature.push(verbClass);
      }
      const key = signature.join(' ');
      if (!seen.has(key)) {
        seen.add(key);
        out.push(signature);
      }
    }
    return out;
  }

  it('a mine over 10,000 distinct recurring signatures aligns a bounded number of pairs, not all of them', () => {
    const instances: MiningInstance[] = distinctSignatures(10_000, 11).flatMap((signature, index) =>
      [0, 1].map((copy) => ({ id: `${index}-${copy}`, signature, lastActivityAt: 0, evidence: 0.5 })),
    );
    const before = alignmentCount();
    const patterns = minePatterns(instances);
    const aligned = alignmentCount() - before;
    // Every distinct signature against every medoid would be ~10^7 alignments per pass.
    assert.ok(aligned <= 60 * 10_000, `${aligned} alignments`);
    assert.ok(patterns.length > 0 && patterns.length <= MAX_PATTERNS, `${patterns.length} patterns`);
  });

  it('the signature index finds exactly what a scan of every pattern finds', () => {
    const patterns = distinctSignatures(300, 5);
    const index = new SignatureIndex(patterns);
    for (const signature of distinctSignatures(500, 9)) {
      let best: { index: number; distance: number } | null = null;
      patterns.forEach((pattern, at) => {
        const { distance } = align(signature, pattern);
        if (distance > LINK_DISTANCE) return;
        if (!best || distance < best.distance || (distance === best.distance && pattern.length > patterns[best.index]!.length))
          best = { index: at, distance };
      });
      const found = index.nearest(signature);
      assert.equal(found?.index ?? null, (best as { index: number } | null)?.index ?? null, signature.join(' '));
    }
  });
});
