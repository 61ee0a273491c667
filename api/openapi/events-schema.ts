/**
 * The JSON Schema (draft 2020-12) of the live-event WebSocket frames: client frames, server
 * control frames, event frames with their signature object, and the payloads of the known event
 * types. Pieces are zod schemas converted with `z.toJSONSchema`; the event frame ties each known
 * `type` to its payload with if/then, so an unknown type (a forward-compatible extension) still
 * validates while a known type with a wrong payload does not. Written to docs/events.schema.json
 * by `npm run openapi`, served at GET /v1/events.schema.json, and checked against every frame the
 * suites receive (test/support/ws.ts).
 */
import { z } from 'zod';
import { CANONICALIZATION, SIGNATURE_ENCODING, SIGNATURE_SCHEME, SIGNING_ALGORITHMS } from '../../core/event-signature.js';

type JsonSchema = Record<string, unknown>;

const uuid = z.string().uuid();
const count = z.number().int().min(0);
const timestamp = z.string().meta({ format: 'date-time' });

const SignatureObject = z
  .looseObject({
    scheme: z.literal(SIGNATURE_SCHEME),
    algorithm: z.enum(SIGNING_ALGORITHMS as [string, ...string[]]),
    canonicalization: z.literal(CANONICALIZATION),
    key_id: z.string().min(1),
    signed_fields: z.array(z.string()).min(1),
    encoding: z.literal(SIGNATURE_ENCODING),
    value: z.string().regex(/^[A-Za-z0-9_-]+$/),
  })
  .meta({ description: 'Detached signature over the frame without `signature`, keys sorted, compact JSON' });

const IngestionProgress = z
  .looseObject({
    engram_id: z.string(),
    stage: z.string(),
    user_stage: z.string().meta({ description: 'reading, structuring, indexing, complete or failed (newer servers may add values)' }),
    current: count,
    total: count,
    message: z.string().nullable(),
  })
  .meta({ description: 'Payload of ingestion_progress' });

const MemoryUnconfident = z
  .looseObject({
    query: z.string(),
    reason: z.string().meta({ description: 'no_results, low_activation or low_fact_confidence' }),
    entity_count: count,
    fact_count: count,
    episode_count: count,
    source_count: count,
    avg_activation: z.number(),
    max_activation: z.number(),
    avg_fact_confidence: z.number(),
    collection_ids: z
      .array(uuid)
      .optional()
      .meta({ description: 'Every collection the search covered (one event per search); the frame collection_id is the first' }),
  })
  .meta({ description: 'Payload of memory_unconfident' });

const WebhookDisabled = z
  .looseObject({
    webhook_id: uuid,
    url: z.string(),
    reason: z.string().meta({ description: 'gone (the endpoint answered 410) or failing (no success for WEBHOOK_DISABLE_AFTER_MS)' }),
    last_status_code: z.number().int().nullable().meta({ description: 'Status of the last attempt; null when there was no HTTP answer' }),
    failing_since: timestamp,
    disabled_at: timestamp,
  })
  .meta({
    description:
      'Payload of webhook_disabled; the frame collection_id is the first collection of the subscription filter, or the nil UUID for a subscription without one',
  });
const FactSupersededFull = z
  .looseObject({
    memory_id: z.string().meta({ description: 'The memory stating the newer fact (the provenance the superseded fact keeps)' }),
    predicate_class: z.string().meta({ description: 'The functional class both facts belong to (employer, residence, …)' }),
    subject_id: z.string(),
    subject: z.string().meta({ description: 'Name of the subject entity' }),
    predicate: z.string().meta({ description: 'Predicate of the superseded fact' }),
    old_fact_id: z.string(),
    old_object_id: z.string(),
    old_object: z.string(),
    new_fact_id: z.string(),
    new_predicate: z.string(),
    new_object_id: z.string(),
    new_object: z.string(),
    superseded_at: timestamp.meta({ description: 'Validity time at which the old fact stopped holding (the new one began)' }),
  })
  .meta({ description: 'A fact_superseded payload as appended' });
const FactRestoredFull = z
  .looseObject({
    memory_id: z.string().meta({ description: 'The removed memory whose statement of the newer fact had superseded the old one' }),
    predicate_class: z.string().meta({ description: 'The functional class of the restored fact (employer, residence, …)' }),
    subject_id: z.string(),
    subject: z.string().meta({ description: 'Name of the subject entity' }),
    predicate: z.string().meta({ description: 'Predicate of the restored fact' }),
    old_fact_id: z.string().meta({
      description: 'The restored fact: with memory_id, it names the fact_superseded event this undoes (old_fact_id, memory_id)',
    }),
    old_object_id: z.string(),
    old_object: z.string(),
    new_fact_id: z.string().optional().meta({
      description: 'The fact whose supersession is undone, only while another memory still states it (absent when it left the graph)',
    }),
    superseded_at: timestamp
      .optional()
      .meta({ description: 'superseded_at of the fact_superseded event this undoes; present with new_fact_id' }),
    valid_to: timestamp.nullable().meta({
      description: 'Where the restored fact holds until now: null when it is current again, else when a later fact supersedes it',
    }),
  })
  .meta({ description: 'A fact_restored payload as appended' });
/** A fact event after rows it described left the graph (core/fact-event-redaction.ts): only what still holds is named. */
const redactedFactPayload = (type: string, full: z.ZodObject) =>
  full
    .partial()
    .extend({
      memory_id: z.string(),
      predicate_class: z.string(),
      redacted: z.literal(true).meta({
        description: `The ${type} event was rewritten: fields naming facts that left the graph (a delete, a collection leave, a failed run) are gone`,
      }),
    })
    .meta({ description: `A redacted ${type} payload (docs/events.md, "Redacted fact events")` });
const FactSuperseded = z
  .union([FactSupersededFull, redactedFactPayload('fact_superseded', FactSupersededFull)])
  .meta({ description: 'Payload of fact_superseded' });
const FactRestored = z
  .union([FactRestoredFull, redactedFactPayload('fact_restored', FactRestoredFull)])
  .meta({ description: 'Payload of fact_restored' });
const EventsRedacted = z
  .looseObject({
    seqs: z
      .array(count)
      .min(1)
      .meta({ description: 'Events of this collection rewritten in the log (in seq order): drop what you kept of them' }),
  })
  .meta({ description: 'Payload of events_redacted' });

const EventFrame = z.looseObject({
  action: z.literal('event'),
  seq: count,
  event_id: uuid,
  type: z.string().min(1),
  collection_id: uuid,
  payload: z.record(z.string(), z.unknown()),
  ts: timestamp,
  signature: SignatureObject.optional(),
});

const reasonFrame = (action: string) => z.looseObject({ action: z.literal(action), reason: z.string(), message: z.string().optional() });

const serverControlFrames = {
  SubscribedFrame: z.looseObject({ action: z.literal('subscribed'), collections: z.array(uuid), event_types: z.array(z.string()) }),
  HeartbeatAckFrame: z.looseObject({ action: z.literal('heartbeat_ack') }),
  UnsubscribedFrame: z.looseObject({ action: z.literal('unsubscribed') }),
  ErrorFrame: reasonFrame('error'),
  SubscribeErrorFrame: reasonFrame('subscribe_error'),
};

const clientFrames = {
  SubscribeFrame: z.strictObject({
    action: z.literal('subscribe'),
    collections: z.array(uuid),
    event_types: z.array(z.string()),
    last_ack_seq: count.optional(),
  }),
  AckFrame: z.strictObject({ action: z.literal('ack'), seq: count }),
  HeartbeatFrame: z.strictObject({ action: z.literal('heartbeat') }),
  UnsubscribeFrame: z.strictObject({ action: z.literal('unsubscribe') }),
};

/** Known event types and their payloads; unknown types pass with any object payload. */
const PAYLOADS: Record<string, string> = {
  ingestion_progress: 'IngestionProgressPayload',
  memory_unconfident: 'MemoryUnconfidentPayload',
  webhook_disabled: 'WebhookDisabledPayload',
  fact_superseded: 'FactSupersededPayload',
  fact_restored: 'FactRestoredPayload',
  events_redacted: 'EventsRedactedPayload',
};

const json = (schema: z.ZodType): JsonSchema => {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' }) as JsonSchema;
  delete out.$schema;
  return out;
};

const DEF = (name: string) => `#/$defs/${name}`;

export function buildEventsSchema(version: string): JsonSchema {
  const eventFrame = json(EventFrame);
  (eventFrame.properties as JsonSchema).signature = { $ref: DEF('SignatureObject') };
  eventFrame.allOf = Object.entries(PAYLOADS).map(([type, payload]) => ({
    if: { properties: { type: { const: type } }, required: ['type'] },
    then: { properties: { payload: { $ref: DEF(payload) } } },
  }));
  const defs: Record<string, JsonSchema> = {
    EventFrame: eventFrame,
    SignatureObject: json(SignatureObject),
    IngestionProgressPayload: json(IngestionProgress),
    MemoryUnconfidentPayload: json(MemoryUnconfident),
    WebhookDisabledPayload: json(WebhookDisabled),
    FactSupersededPayload: json(FactSuperseded),
    FactRestoredPayload: json(FactRestored),
    EventsRedactedPayload: json(EventsRedacted),
    ...Object.fromEntries(Object.entries({ ...serverControlFrames, ...clientFrames }).map(([name, schema]) => [name, json(schema)])),
    ServerFrame: { oneOf: ['EventFrame', ...Object.keys(serverControlFrames)].map((name) => ({ $ref: DEF(name) })) },
    ClientFrame: { oneOf: Object.keys(clientFrames).map((name) => ({ $ref: DEF(name) })) },
  };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://engram.local/events.schema.json',
    title: `Engram live-event frames ${version}`,
    description:
      'Frames of GET /v1/ws/memory-events (see docs/events.md). Validate a received frame against #/$defs/ServerFrame, ' +
      'a frame you send against #/$defs/ClientFrame. Unknown fields and unknown event types are forward-compatible extensions.',
    oneOf: [{ $ref: DEF('ServerFrame') }, { $ref: DEF('ClientFrame') }],
    $defs: defs,
  };
}
