/**
 * An imported snapshot's copy in a collection of its own (services/device-memory.ts, import): its
 * episodes get new memory ids, and its entities and facts the ids the graph builder derives in
 * that scope, so a copy never shares an id with its source or with another copy.
 */
import { newId } from '../core/ids.js';
import { entityIdFor, factIdFor, type NewEntity, type NewFact, type NewMention } from '../core/graph-model.js';
import { decodeFloat16, decodeInt8 } from '../snapshot/format.js';
import type { OpenedSnapshot } from '../snapshot/seal.js';
import type { ChunkSource } from '../store/chunks.js';
import type { ImportedMemory } from '../store/snapshots.js';

/** The imported copy gets ids of its own scope (new memory ids; entity and fact ids derived as the graph builder derives them). */
export function translateIds(
  opened: OpenedSnapshot,
  scope: { tenantId: string; collectionId: string },
  dimensions: number,
): { memories: ImportedMemory[]; graph: { entities: NewEntity[]; facts: NewFact[]; mentions: NewMention[] } } {
  const memoryIds = new Map<string, string>();
  const memories: ImportedMemory[] = [];
  for (const episode of opened.body.episodes) {
    const id = newId();
    memoryIds.set(episode.id, id);
    const withVectors = episode.chunks.filter((chunk) => chunk.vector !== null);
    memories.push({
      id,
      kind: episode.kind,
      name: episode.name,
      metadata: episode.metadata,
      createdAt: new Date(episode.created_at),
      chunks: withVectors.map((chunk) => ({
        index: chunk.index,
        text: chunk.text,
        source: chunk.source as unknown as ChunkSource,
        vector: decodeFloat16(chunk.vector!, dimensions)!,
      })),
    });
  }
  const entityIds = new Map<string, string>();
  const entities: NewEntity[] = opened.body.entities.map((entity) => {
    const id = entityIdFor(scope, entity.key);
    entityIds.set(entity.id, id);
    return {
      id,
      key: entity.key,
      name: entity.name,
      category: entity.category,
      aliases: entity.aliases,
      aliasKeys: entity.alias_keys,
      description: entity.description,
      nameVector: entity.name_vector ? decodeInt8(entity.name_vector, dimensions) : null,
    };
  });
  const factIds = new Map<string, string>();
  const facts: NewFact[] = opened.body.facts.map((fact) => {
    const subjectId = entityIds.get(fact.subject_id)!;
    const objectId = entityIds.get(fact.object_id)!;
    const id = factIdFor(scope, subjectId, fact.predicate, objectId);
    factIds.set(fact.id, id);
    return { id, subjectId, objectId, predicate: fact.predicate, description: fact.description, confidence: fact.confidence };
  });
  const mentions: NewMention[] = opened.body.mentions.map((mention) => ({
    memoryId: memoryIds.get(mention.episode_id)!,
    chunkIndex: mention.chunk,
    kind: mention.kind,
    targetId: (mention.kind === 'entity' ? entityIds : factIds).get(mention.target_id)!,
    count: mention.count,
    confidence: mention.confidence,
    description: mention.description,
    ...(mention.valid_from !== undefined ? { validFrom: mention.valid_from === null ? null : new Date(mention.valid_from) } : {}),
    ...(mention.valid_to !== undefined ? { validTo: mention.valid_to === null ? null : new Date(mention.valid_to) } : {}),
  }));
  return { memories, graph: { entities, facts, mentions } };
}
