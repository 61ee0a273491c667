import Router from '@koa/router';
import { AppError, validationError } from '../../../core/errors.js';
import type { CreateMemoryInput } from '../../../services/memories.js';
import type { ApiDeps, AppState } from '../../context.js';
import { handle } from '../../middleware/validate.js';
import { listEnvelope } from '../envelope.js';
import { assertSnapshotBodySize, inlineSnapshot, respondWithSnapshot } from '../device-memory/presenter.js';
import { decodeContentParts } from './content-parts.js';
import { presentAccepted, presentMemory, presentMemoryWithChunks } from './presenter.js';
import {
  appendMessagesBody,
  contentQuery,
  createMemoryBody,
  deleteManyBody,
  listMemoriesQuery,
  memoryIdParams,
  updateMemoryBody,
  type CreateMemoryBody,
} from './schema.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The Idempotency-Key header of a create (collection or device mode), or null. */
function idempotencyKeyOf(header: string): string | null {
  if (!header) return null;
  if (!IDEMPOTENCY_KEY.test(header))
    throw validationError([{ field: 'Idempotency-Key', issue: 'must be 1 to 255 printable ASCII characters' }]);
  return header;
}

function toCreateInput(body: CreateMemoryBody, inlinePartMaxBytes: number): CreateMemoryInput {
  const base = {
    collectionId: body.collection_id!,
    kind: body.kind ?? (body.messages ? 'conversation' : 'document'),
    name: body.name ?? null,
    metadata: body.metadata ?? {},
    occurredAt: body.occurred_at ?? null,
  } as const;
  if (body.content_parts) return { ...base, content: {}, files: decodeContentParts(body.content_parts, inlinePartMaxBytes) };
  return {
    ...base,
    content: body.messages ? { messages: body.messages } : body.chunks ? { chunks: body.chunks } : { raw_text: body.raw_text! },
  };
}

export function memoriesRouter({ services, config }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/memories' });
  const createBody = createMemoryBody(config);
  const appendBody = appendMessagesBody(config);

  router.post(
    '/',
    handle({ body: createBody }, async (ctx, input) => {
      const body = input.body;
      if (body.snapshot !== undefined || body.snapshot_ref !== undefined) {
        // Device mode: processed synchronously, nothing stored (services/device-memory.ts).
        if (body.snapshot !== undefined) assertSnapshotBodySize(ctx, config.SNAPSHOT_MAX_BYTES);
        const source = body.snapshot_ref ? { snapshotRef: body.snapshot_ref } : inlineSnapshot(ctx, body.snapshot!);
        const idempotencyKey = idempotencyKeyOf(ctx.get('Idempotency-Key'));
        const outcome = await services.deviceMemory.create(
          ctx.state.principal.tenantId,
          source,
          {
            rawText: body.raw_text!,
            metadata: body.metadata ?? {},
            idempotencyKey,
          },
          ctx.state.signal,
        );
        if (outcome.replayed) ctx.set('Idempotent-Replayed', 'true');
        respondWithSnapshot(ctx, outcome, true);
        return;
      }
      const idempotencyKey = idempotencyKeyOf(ctx.get('Idempotency-Key'));
      const { memory, replayed } = await services.memories.create(
        ctx.state.principal.tenantId,
        toCreateInput(body, config.INLINE_PART_MAX_BYTES),
        idempotencyKey,
      );
      ctx.state.workflowId = memory.workflow_id;
      ctx.status = 202;
      ctx.set('Location', `/v1/memories/${memory.id}`);
      if (replayed) ctx.set('Idempotent-Replayed', 'true');
      ctx.body = { results: presentAccepted(memory) };
    }),
  );

  router.get(
    '/',
    handle({ query: listMemoriesQuery }, async (ctx, input) => {
      const query = input.query;
      const page = await services.memories.list(ctx.state.principal.tenantId, {
        collectionIds: query.collection_ids,
        filter: { metadata: query.metadata_filters },
        offset: query.offset,
        limit: query.limit,
      });
      ctx.body = listEnvelope(page, presentMemory);
    }),
  );

  router.post(
    '/delete',
    handle({ body: deleteManyBody }, async (ctx, input) => {
      const ids = input.body;
      const { deleted, notFound } = await services.memories.delete(ctx.state.principal.tenantId, ids);
      ctx.body = { results: { deleted, not_found: notFound, deleted_count: deleted.length } };
    }),
  );

  router.get(
    '/:memory_id',
    handle({ params: memoryIdParams }, async (ctx, input) => {
      const { memory_id } = input.params;
      const { memory, chunks } = await services.memories.get(ctx.state.principal.tenantId, memory_id);
      ctx.body = { results: presentMemoryWithChunks(memory, chunks) };
    }),
  );

  router.get(
    '/:memory_id/content',
    handle({ params: memoryIdParams, query: contentQuery }, async (ctx, input) => {
      const { memory_id } = input.params;
      const { part } = input.query;
      const { file, stream } = await services.memories.openFile(ctx.state.principal.tenantId, memory_id, part);
      ctx.set('Content-Type', file.media_type);
      ctx.set('Content-Length', String(file.size));
      ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.filename)}`);
      ctx.set('Digest', `sha-256=${Buffer.from(file.sha256, 'hex').toString('base64')}`);
      ctx.body = stream;
    }),
  );

  router.patch(
    '/:memory_id',
    handle({ params: memoryIdParams, body: updateMemoryBody }, async (ctx, input) => {
      const { memory_id } = input.params;
      const body = input.body;
      const memory = await services.memories.update(ctx.state.principal.tenantId, memory_id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
        mergeMetadata: body.merge_metadata ?? false,
        ...(body.collection_ids !== undefined ? { collectionIds: body.collection_ids } : {}),
      });
      ctx.body = { results: presentMemory(memory) };
    }),
  );

  router.post(
    '/:memory_id/messages',
    handle({ params: memoryIdParams, body: appendBody }, async (ctx, input) => {
      const { memory_id } = input.params;
      const body = input.body;
      const memory = await services.memories.append(ctx.state.principal.tenantId, memory_id, {
        collectionId: body.collection_id,
        messages: body.messages,
      });
      ctx.state.workflowId = memory.workflow_id;
      ctx.status = 202;
      ctx.set('Location', `/v1/memories/${memory.id}`);
      ctx.body = { results: { ...presentMemory(memory), appended_messages: body.messages.length } };
    }),
  );

  router.delete(
    '/:memory_id',
    handle({ params: memoryIdParams }, async (ctx, input) => {
      const { memory_id } = input.params;
      const { deleted } = await services.memories.delete(ctx.state.principal.tenantId, [memory_id]);
      if (deleted.length === 0) throw new AppError(404, 'memory_not_found', `No memory with id ${memory_id}`);
      ctx.body = { results: { id: memory_id, deleted: true } };
    }),
  );

  return router;
}
