/**
 * The graph signal for the offline harness (bench/locomo/offline.ts): each conversation's graph
 * built in this process by the service's own structuring code (activities/graph-builder.ts with the
 * local extractor, into the in-memory graph store device snapshots use), one memory per session and
 * one chunk per turn as the API ingests them, then ranked over by the service's matchGraph. Without
 * it the harness could not weigh the graph signal, whose weight the API figures questioned.
 */
import { GraphBuilder, extractChunks } from '../../activities/graph-builder.js';
import { PredicateClassifier, type FactLexicon } from '../../core/fact-lexicon.js';
import type { Embedder } from '../../models/embedder.js';
import type { StructureExtractor } from '../../extractors/structure/types.js';
import type { GraphPartition } from '../../search/graph-index.js';
import { SnapshotGraph } from '../../snapshot/snapshot-graph.js';
import { EMPTY_BODY } from '../../snapshot/seal.js';
import type { LocomoConversation } from './dataset.js';

export async function conversationGraph(
  conversation: LocomoConversation,
  options: { extractor: StructureExtractor; embedder: Embedder; similarityThreshold: number; lexicon: FactLexicon },
): Promise<GraphPartition> {
  const graph = new SnapshotGraph(EMPTY_BODY(), options.embedder.dimensions);
  const builder = new GraphBuilder({
    graph,
    extractor: options.extractor,
    embedder: options.embedder,
    similarityThreshold: options.similarityThreshold,
    classifier: new PredicateClassifier(options.lexicon),
  });
  const scope = { tenantId: 'offline', collectionId: conversation.sampleId };
  for (const session of conversation.sessions) {
    const memoryId = `${conversation.sampleId}-s${session.index}`;
    const time = new Date(session.occurredAt);
    const chunks = session.turns.map((turn, index) => ({
      index,
      text: turn.content,
      source: { type: 'message' as const, role: turn.role, message_index: index },
    }));
    const extractions = await extractChunks(
      options.extractor,
      chunks,
      () => undefined,
      () => time,
    );
    await builder.writeToCollection(scope, memoryId, extractions);
  }
  return graph.partition();
}
