/**
 * Derivation of a memory's procedure traces in its collections: the text → traces logic is pure
 * (extractors/procedures/derive.ts); this reads what it needs from the store (the memory's chunks
 * and the graph entities and facts it mentions in each collection) and writes the traces, which
 * re-chains the instances and refreshes the patterns around them (core/procedures/derivation.ts).
 */
import { deriveTraces, type LinkableEntity } from '../extractors/procedures/derive.js';
import type { Store } from '../store/index.js';
import type { Memory } from '../core/memory-model.js';
import { memoryTime, storedChunkTime } from '../core/memory-time.js';
import type { NewTrace } from '../core/procedures/rules.js';
import type { Sentence } from '../extractors/structure/parse.js';

/** Derives and stores the memory's traces in each collection; returns how many per collection (the most). */
export async function deriveMemoryProcedures(
  store: Store,
  memory: Pick<Memory, 'id' | 'tenant_id' | 'created_at' | 'occurred_at'>,
  collectionIds: string[],
  onProgress: () => void,
  /** From a single-pass ingestion: the memory's chunks as already read, and the extractor's parse of each (by index). */
  shared: { chunks?: Awaited<ReturnType<Store['chunks']['forMemory']>>; parses?: ReadonlyMap<number, Sentence[]> } = {},
): Promise<number> {
  const chunks = (shared.chunks ?? (await store.chunks.forMemory(memory.id))).map((chunk) => ({
    index: chunk.index,
    text: chunk.text,
    role: chunk.source.type === 'message' ? chunk.source.role : undefined,
    time: storedChunkTime(chunk, memory),
    sentences: shared.parses?.get(chunk.index),
  }));
  const time = memoryTime(memory);
  const mentions = await store.graph.mentionsOfMemories([memory.id]);
  let most = 0;
  for (const collectionId of collectionIds) {
    const scope = { tenantId: memory.tenant_id, collectionId };
    const own = mentions.filter((mention) => mention.collection_id === collectionId && mention.tenant_id === memory.tenant_id);
    const entityIds = [...new Set(own.filter((mention) => mention.target_kind === 'entity').map((mention) => mention.target_id))];
    // A state's facts: the graph facts of the trace's chunk that involve its entities. Both reads
    // at once: they are two round trips on a memory's path to searchable.
    const factIds = [...new Set(own.filter((mention) => mention.target_kind === 'fact').map((mention) => mention.target_id))];
    const [entityRows, facts] = await Promise.all([store.graph.entitiesByIds(entityIds), store.graph.factsByIds(factIds)]);
    const entities: LinkableEntity[] = entityRows.map((entity) => ({
      id: entity.id,
      key: entity.key,
      name: entity.name,
      aliases: entity.aliases,
    }));
    const drafts = deriveTraces({ memoryTime: time, chunks, entities });
    onProgress();
    const traces: NewTrace[] = drafts.map((draft) => {
      const members = new Set([...draft.actingEntityIds, ...draft.affectedEntityIds]);
      const inChunk = new Set(own.filter((mention) => mention.chunk_index === draft.chunkIndex).map((mention) => mention.target_id));
      return {
        ...draft,
        factIds: facts
          .filter((fact) => inChunk.has(fact.id) && (members.has(fact.subject_id) || members.has(fact.object_id)))
          .map((fact) => fact.id),
      };
    });
    // A full pattern mine that falls due runs here, in the worker, heartbeating through onProgress.
    await store.procedures.replaceMemoryTraces(scope, memory.id, time, traces, onProgress);
    most = Math.max(most, traces.length);
  }
  return most;
}
