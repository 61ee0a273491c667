import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Db } from 'mongodb';
import { GraphRepository } from './graph.js';

/**
 * A tiny in-memory stand-in for the few collection calls dropRows makes, counting the rows each
 * read hands back: what the test measures is how much a delete reads, not timing.
 */
type Row = Record<string, unknown> & { _id: string };
function matches(row: Row, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([field, condition]) => {
    const value = row[field];
    if (condition === null || typeof condition !== 'object' || Array.isArray(condition)) return value === condition;
    return Object.entries(condition as Record<string, unknown>).every(([op, operand]) => {
      if (op === '$in') return (operand as unknown[]).includes(value);
      if (op === '$ne') return value !== operand;
      if (op === '$type') return operand === 'string' && typeof value === 'string';
      if (op === '$gte') return (value as number) >= (operand as number);
      throw new Error(`operator ${op} not faked`);
    });
  });
}
class FakeCollection {
  rows: Row[] = [];
  rowsRead = 0;
  find(filter: Record<string, unknown>, options: { limit?: number } = {}) {
    const found = this.rows.filter((row) => matches(row, filter)).slice(0, options.limit ?? Infinity);
    this.rowsRead += found.length;
    return {
      toArray: () => Promise.resolve(found),
      async *[Symbol.asyncIterator]() {
        yield* found;
      },
    };
  }
  findOne(filter: Record<string, unknown>) {
    const found = this.rows.find((row) => matches(row, filter)) ?? null;
    if (found) this.rowsRead++;
    return Promise.resolve(found);
  }
  deleteMany(filter: Record<string, unknown>) {
    const before = this.rows.length;
    this.rows = this.rows.filter((row) => !matches(row, filter));
    return Promise.resolve({ deletedCount: before - this.rows.length });
  }
  bulkWrite(operations: { updateOne: { filter: Record<string, unknown>; update: { $set: Record<string, unknown> } } }[]) {
    for (const { updateOne } of operations) {
      const row = this.rows.find((candidate) => matches(candidate, updateOne.filter));
      if (row) Object.assign(row, updateOne.update.$set);
    }
    return Promise.resolve({});
  }
}

describe('graph provenance removal', () => {
  it('reads rows in proportion to what a delete removes, not to how widely its entities are mentioned', async () => {
    const collections = new Map<string, FakeCollection>();
    const db = {
      collection: (name: string) => {
        const collection = collections.get(name) ?? new FakeCollection();
        collections.set(name, collection);
        return collection;
      },
    } as unknown as Db; // the fake implements only what GraphRepository's removal calls
    const graph = new GraphRepository(db);
    const mentions = collections.get('graph_mentions')!;
    const entities = collections.get('graph_entities')!;
    const MEMORIES = 2000;
    entities.rows.push({ _id: 'alice', collection_id: 'c', description: 'said by m0' });
    for (let memory = 0; memory < MEMORIES; memory++) {
      mentions.rows.push({
        _id: `mention-${memory}`,
        memory_id: `m${memory}`,
        collection_id: 'c',
        target_id: 'alice',
        description: `said by m${memory}`,
      });
    }
    const perDelete: number[] = [];
    for (let memory = 0; memory < 50; memory++) {
      mentions.rowsRead = 0;
      // The entity other memories still mention was rewritten: search processes must read it again.
      assert.deepEqual(await graph.removeMemories([`m${memory}`]), ['alice']);
      perDelete.push(mentions.rowsRead);
    }
    assert.ok(Math.max(...perDelete) <= 4, `rows read per one-memory delete: up to ${Math.max(...perDelete)}`);
    assert.equal(entities.rows.length, 1, 'the entity keeps its other mentions');
    assert.notEqual(entities.rows[0]!.description, 'said by m0', 'no sentence of a deleted memory stays');

    // The last mention going takes the entity with it.
    mentions.rows = mentions.rows.filter((row) => row.memory_id === `m${MEMORIES - 1}`);
    assert.deepEqual(await graph.removeMemories([`m${MEMORIES - 1}`]), [], 'a removed entity is not announced for reading again');
    assert.equal(entities.rows.length, 0);
  });
});
