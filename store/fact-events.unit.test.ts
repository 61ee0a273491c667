/**
 * FactEvents' removal announces what it rewrote: every caller that takes a memory's graph rows
 * away (a delete, a departure from collections, a failed run or append) gets the `refresh_graph`
 * notice from this one place, after the rows are rewritten, so none can leave a stale name.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_FACT_LEXICON, PredicateClassifier } from '../core/fact-lexicon.js';
import { FactEvents } from './fact-events.js';

type Step = [string, ...unknown[]];

function setup(rewritten: string[]) {
  const steps: Step[] = [];
  const graph = {
    subjectsBackedBy: async () => [],
    subjectTimelines: async () => ({ facts: [], names: new Map<string, string>() }),
    removeMemories: async (memoryIds: string[], onlyCollections?: string[]) => {
      steps.push(['graph.removeMemories', memoryIds, onlyCollections]);
      return rewritten;
    },
    removeChunkProvenance: async (memoryId: string, collectionIds: string[], fromChunk: number) => {
      steps.push(['graph.removeChunkProvenance', memoryId, collectionIds, fromChunk]);
      return rewritten;
    },
  };
  const events = {
    append: async () => 0,
    redactFactEvents: async () => [],
  };
  const feed = {
    publishGraphRefresh: async (tenantId: string, memoryId: string, targetIds: readonly string[]) => {
      steps.push(['feed.publishGraphRefresh', tenantId, memoryId, [...targetIds]]);
    },
  };
  const factEvents = new FactEvents(graph, events, feed, new PredicateClassifier(DEFAULT_FACT_LEXICON));
  return { factEvents, steps };
}

describe('FactEvents: a removal announces the graph records it rewrote', () => {
  const cases: {
    name: string;
    run: (factEvents: FactEvents) => Promise<void>;
    removal: Step;
    memoryId: string;
  }[] = [
    {
      name: 'whole memories (a delete)',
      run: (factEvents) => factEvents.removeMemories('tenant-a', ['m1', 'm2']),
      removal: ['graph.removeMemories', ['m1', 'm2'], undefined],
      memoryId: 'm1',
    },
    {
      name: 'a memory leaving some collections',
      run: (factEvents) => factEvents.removeMemories('tenant-a', ['m1'], ['c2']),
      removal: ['graph.removeMemories', ['m1'], ['c2']],
      memoryId: 'm1',
    },
    {
      name: "a failed append's chunks",
      run: (factEvents) => factEvents.removeChunkRows('tenant-a', 'm1', ['c1'], 3),
      removal: ['graph.removeChunkProvenance', 'm1', ['c1'], 3],
      memoryId: 'm1',
    },
  ];
  for (const { name, run, removal, memoryId } of cases) {
    it(`${name}: the notice follows the rewrite, under the caller's tenant`, async () => {
      const { factEvents, steps } = setup(['entity-1', 'fact-1']);
      await run(factEvents);
      assert.deepEqual(steps, [removal, ['feed.publishGraphRefresh', 'tenant-a', memoryId, ['entity-1', 'fact-1']]]);
    });
  }

  it('publishes nothing for no memories', async () => {
    const { factEvents, steps } = setup(['entity-1']);
    await factEvents.removeMemories('tenant-a', []);
    assert.deepEqual(steps, []);
  });

  it('a removal that fails publishes nothing (the retry announces what it then rewrites)', async () => {
    const steps: Step[] = [];
    const failing = new FactEvents(
      {
        subjectsBackedBy: async () => [],
        subjectTimelines: async () => ({ facts: [], names: new Map<string, string>() }),
        removeMemories: async () => {
          throw new Error('store down');
        },
        removeChunkProvenance: async () => [],
      },
      { append: async () => 0, redactFactEvents: async () => [] },
      {
        publishGraphRefresh: async () => {
          steps.push(['feed.publishGraphRefresh']);
        },
      },
      new PredicateClassifier(DEFAULT_FACT_LEXICON),
    );
    await assert.rejects(failing.removeMemories('tenant-a', ['m1']), /store down/);
    assert.deepEqual(steps, []);
  });
});
