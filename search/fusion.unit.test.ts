import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ALL_SIGNALS, DEFAULT_FUSION_WEIGHTS, fuse, type Candidate, type FusionContext, type SignalName } from './fusion.js';

const context = (signals: readonly SignalName[], overrides: Partial<FusionContext> = {}): FusionContext => ({
  signals: new Set(signals),
  cosineFloor: 0.7,
  cosineMax: 0.9,
  bm25Max: 10,
  lexicalRarity: 1,
  ...overrides,
});

const order = (candidates: Candidate[], signals: readonly SignalName[], overrides: Partial<FusionContext> = {}) =>
  fuse(candidates, context(signals, overrides), DEFAULT_FUSION_WEIGHTS).map((candidate) => candidate.chunkId);

describe('fuse', () => {
  const semantic: Candidate = { chunkId: 'semantic', memoryId: 'm1', cosine: 0.9 };
  const exact: Candidate = { chunkId: 'exact', memoryId: 'm2', cosine: 0.8, bm25: 10 };
  const weak: Candidate = { chunkId: 'weak', memoryId: 'm3', cosine: 0.7, bm25: 1 };

  it('with one signal, ranks by that signal’s raw value and reports it as the score', () => {
    assert.deepEqual(order([exact, semantic, weak], ['vector']), ['semantic', 'exact', 'weak']);
    assert.deepEqual(order([semantic, weak, exact], ['lexical']), ['exact', 'weak', 'semantic']);
    const [top] = fuse([semantic], context(['vector']), DEFAULT_FUSION_WEIGHTS);
    assert.equal(top!.score, 0.9);
  });

  it('normalises each signal to 0..1 in the breakdown', () => {
    const fused = fuse([semantic, exact, weak], context(ALL_SIGNALS), DEFAULT_FUSION_WEIGHTS);
    const byId = new Map(fused.map((candidate) => [candidate.chunkId, candidate.breakdown]));
    assert.equal(byId.get('semantic')!.vector, 1);
    assert.equal(byId.get('weak')!.vector, 0);
    assert.equal(byId.get('exact')!.vector, 0.5);
    assert.equal(byId.get('exact')!.lexical, 1);
    assert.equal(byId.get('semantic')!.lexical, 0, 'not retrieved lexically');
    for (const breakdown of byId.values()) for (const value of Object.values(breakdown)) assert.ok(value >= 0 && value <= 1);
  });

  it('lets a rare exact match win over a slightly closer paraphrase, but not a common one', () => {
    const close: Candidate = { ...exact, cosine: 0.85 };
    assert.equal(order([semantic, close], ['vector', 'lexical'], { lexicalRarity: 1 })[0], 'exact');
    const common = fuse([semantic, close], context(['vector', 'lexical'], { lexicalRarity: 0 }), {
      ...DEFAULT_FUSION_WEIGHTS,
      lexicalRarity: 1,
    });
    assert.equal(common[0]!.chunkId, 'semantic', 'with β = 1 a term found everywhere carries no lexical weight');
  });

  it('graph and activation break ties the other signals cannot', () => {
    const a: Candidate = { chunkId: 'a', memoryId: 'm1', cosine: 0.8, bm25: 5, activation: 0.2 };
    const b: Candidate = { chunkId: 'b', memoryId: 'm2', cosine: 0.8, bm25: 5, activation: 0.9 };
    assert.deepEqual(order([a, b], ALL_SIGNALS), ['b', 'a']);
    assert.deepEqual(order([a, { ...b, activation: 0.2, graph: 0.5 }], ALL_SIGNALS), ['b', 'a']);
    // Without either, equal scores keep a stable (chunk id) order.
    assert.deepEqual(order([b, a], ['vector', 'lexical']), ['a', 'b']);
  });

  it('copes with degenerate contexts', () => {
    const fused = fuse(
      [semantic],
      context(['vector', 'lexical'], { cosineFloor: 0.9, cosineMax: 0.9, bm25Max: 0 }),
      DEFAULT_FUSION_WEIGHTS,
    );
    assert.equal(fused[0]!.breakdown.vector, 1);
    assert.equal(fused[0]!.breakdown.lexical, 0);
    assert.deepEqual(fuse([], context(ALL_SIGNALS), DEFAULT_FUSION_WEIGHTS), []);
  });
});
