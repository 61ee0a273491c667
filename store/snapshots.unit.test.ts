import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { batches, EXPORT_PAGE, ExportBudgetExceeded, exportBudget, exportCost, exportedGraph, IMPORT_BATCH } from './snapshots.js';

describe('snapshot export and import: the pure rules', () => {
  const paging: [count: number, size: number, sizes: number[]][] = [
    [0, IMPORT_BATCH, []],
    [1, IMPORT_BATCH, [1]],
    [IMPORT_BATCH, IMPORT_BATCH, [IMPORT_BATCH]],
    [IMPORT_BATCH + 1, IMPORT_BATCH, [IMPORT_BATCH, 1]],
    [2 * EXPORT_PAGE + 3, EXPORT_PAGE, [EXPORT_PAGE, EXPORT_PAGE, 3]],
  ];
  for (const [count, size, sizes] of paging) {
    it(`${count} items in pages of ${size} → ${JSON.stringify(sizes)}, every item once, in order`, () => {
      const items = Array.from({ length: count }, (_, index) => index);
      const pages = batches(items, size);
      assert.deepEqual(
        pages.map((page) => page.length),
        sizes,
      );
      assert.deepEqual(pages.flat(), items);
    });
  }

  const vectors: [label: string, vector: Float32Array | null, bytes: number][] = [
    ['no vector', null, 4],
    ['1 dimension', new Float32Array(1), 4],
    ['3 dimensions (6 bytes, 8 in base64)', new Float32Array(3), 8],
    ['384 dimensions', new Float32Array(384), 1024],
  ];
  for (const [label, vector, bytes] of vectors) {
    it(`a vector costs what it takes as base64 float16: ${label} → ${bytes}`, () => {
      assert.equal(exportCost.vector(vector), bytes);
    });
  }

  it('each row costs at least its text, so a large text cannot slip under the budget', () => {
    const text = 'x'.repeat(10_000);
    assert.ok(exportCost.chunk(text, null) > text.length);
    assert.ok(exportCost.memory({ note: text }, 'name') > text.length);
    assert.ok(exportCost.entity(text, text) > 2 * text.length);
    assert.ok(exportCost.fact(text) > text.length);
    assert.ok(exportCost.mention(text) > text.length);
  });

  it('the budget allows exactly its bytes and stops the read at the first byte beyond', () => {
    const spend = exportBudget(100);
    spend(60);
    spend(40);
    assert.throws(
      () => spend(1),
      (error: unknown) => error instanceof ExportBudgetExceeded && error.budgetBytes === 100,
    );
  });

  it("a chunk or mention is exported only inside its memory's indexed range", () => {
    const indexed = new Map([
      ['m1', 2],
      ['m2', 0],
    ]);
    const cases: [memoryId: string, index: number, exported: boolean][] = [
      ['m1', 0, true],
      ['m1', 1, true],
      ['m1', 2, false],
      ['m2', 0, false],
      ['not-exported', 0, false],
    ];
    for (const [memoryId, index, exported] of cases)
      assert.equal(exportedGraph.indexed(indexed, memoryId, index), exported, `${memoryId}:${index}`);
  });

  it('only what exported chunks back: entities with a mention, facts with a mention and both entities, mentions of what is kept', () => {
    const backed = new Set(['e1', 'e2', 'f12', 'f13']);
    assert.equal(exportedGraph.entity(backed, 'e1'), true);
    assert.equal(exportedGraph.entity(backed, 'e3'), false);
    const entityIds = new Set(['e1', 'e2']);
    const fact = (id: string, subjectId: string, objectId: string) => ({ id, subjectId, objectId });
    assert.equal(exportedGraph.fact(backed, entityIds, fact('f12', 'e1', 'e2')), true);
    assert.equal(exportedGraph.fact(backed, entityIds, fact('f13', 'e1', 'e3')), false, 'an endpoint not exported');
    assert.equal(exportedGraph.fact(backed, entityIds, fact('f21', 'e2', 'e1')), false, 'no mention backs it');
    const factIds = new Set(['f12']);
    assert.equal(exportedGraph.mention(entityIds, factIds, { kind: 'entity', targetId: 'e1' }), true);
    assert.equal(exportedGraph.mention(entityIds, factIds, { kind: 'fact', targetId: 'f13' }), false);
    assert.equal(exportedGraph.mention(entityIds, factIds, { kind: 'fact', targetId: 'f12' }), true);
    // Kinds are not interchangeable: a fact id is no entity.
    assert.equal(exportedGraph.mention(entityIds, factIds, { kind: 'entity', targetId: 'f12' }), false);
  });
});
