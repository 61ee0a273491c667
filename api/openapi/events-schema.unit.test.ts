/** The events JSON Schema: committed copy up to date, and table-driven good and bad frames. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { projectRoot } from '../../config/index.js';
import { buildEventsSchema } from './events-schema.js';
import { eventsSchemaText, packageVersion } from './export.js';
import { noResultsPayload } from '../../test/fixtures/events.js';

const schema = buildEventsSchema(packageVersion());
const ajv = new Ajv2020({ strict: false, validateFormats: false });
ajv.addSchema(schema);
const server = ajv.getSchema(`${schema.$id as string}#/$defs/ServerFrame`)!;
const client = ajv.getSchema(`${schema.$id as string}#/$defs/ClientFrame`)!;

const ID = '3f1c6f8e-4a8e-4c57-9b1a-2f0d1c2b3a4e';
const progress = { engram_id: ID, stage: 'embed', user_stage: 'indexing', current: 2, total: 4, message: null };
const event = (extra: Record<string, unknown> = {}) => ({
  action: 'event',
  seq: 7,
  event_id: ID,
  type: 'ingestion_progress',
  collection_id: ID,
  payload: progress,
  ts: '2026-11-24T03:00:00.000Z',
  ...extra,
});
const signature = {
  scheme: 'eddsa-detached',
  algorithm: 'Ed25519',
  canonicalization: 'json-sort-keys-v1',
  key_id: 'k1',
  signed_fields: ['action', 'collection_id', 'event_id', 'payload', 'seq', 'ts', 'type'],
  encoding: 'base64url',
  value: 'abc_-123',
};

test('docs/events.schema.json is up to date (run `npm run openapi`)', () => {
  assert.equal(readFileSync(path.join(projectRoot(), 'docs', 'events.schema.json'), 'utf8'), eventsSchemaText());
});

// Alice's employer changed: both events name the subject and the old fact; fact_superseded adds the
// new fact, fact_restored (the new one's memory deleted) says until when the old one holds again.
const oldFact = {
  memory_id: ID,
  predicate_class: 'employer',
  subject_id: 's',
  subject: 'Alice Chen',
  predicate: 'work at',
  old_fact_id: 'f1',
  old_object_id: 'o1',
  old_object: 'Acme',
};

const factSuperseded = {
  ...oldFact,
  new_fact_id: 'f2',
  new_predicate: 'join',
  new_object_id: 'o2',
  new_object: 'Globex',
  superseded_at: '2025-06-01T00:00:00.000Z',
};

const factRestored = { ...oldFact, new_fact_id: 'f2', superseded_at: '2025-06-01T00:00:00.000Z', valid_to: null };

const serverCases: [string, unknown, boolean][] = [
  ['signed ingestion_progress', event({ signature }), true],
  ['unsigned event', event(), true],
  ['unknown event type with any payload (forward compatible)', event({ type: 'graph_updated', payload: { x: 1 } }), true],
  ['unknown extra field', event({ trace: 'x' }), true],
  ['memory_unconfident', event({ type: 'memory_unconfident', payload: noResultsPayload('q') }), true],
  ['fact_superseded', event({ type: 'fact_superseded', payload: factSuperseded }), true],
  [
    'fact_superseded without the new object',
    event({ type: 'fact_superseded', payload: { ...factSuperseded, new_object: undefined } }),
    false,
  ],
  ['fact_restored, current again', event({ type: 'fact_restored', payload: factRestored }), true],
  [
    'fact_restored until a later fact',
    event({ type: 'fact_restored', payload: { ...factRestored, valid_to: '2025-09-01T00:00:00.000Z' } }),
    true,
  ],
  ['fact_restored without valid_to', event({ type: 'fact_restored', payload: { ...factRestored, valid_to: undefined } }), false],
  [
    'fact_restored whose newer fact left the graph',
    event({ type: 'fact_restored', payload: { ...factRestored, new_fact_id: undefined, superseded_at: undefined } }),
    true,
  ],
  [
    'fact_superseded redacted to its old fact',
    event({
      type: 'fact_superseded',
      payload: {
        ...factSuperseded,
        new_fact_id: undefined,
        new_predicate: undefined,
        new_object_id: undefined,
        new_object: undefined,
        superseded_at: undefined,
        redacted: true,
      },
    }),
    true,
  ],
  [
    'fact_superseded redacted to nothing',
    event({ type: 'fact_superseded', payload: { memory_id: ID, predicate_class: 'employer', redacted: true } }),
    true,
  ],
  [
    'fact_restored redacted to nothing',
    event({ type: 'fact_restored', payload: { memory_id: ID, predicate_class: 'employer', redacted: true } }),
    true,
  ],
  ['redacted fact_superseded without its class', event({ type: 'fact_superseded', payload: { memory_id: ID, redacted: true } }), false],
  [
    'redacted fact_superseded with a name of the wrong type',
    event({ type: 'fact_superseded', payload: { memory_id: ID, predicate_class: 'employer', subject: 3, redacted: true } }),
    false,
  ],
  ['events_redacted', event({ type: 'events_redacted', payload: { seqs: [3, 9] } }), true],
  ['events_redacted without seqs', event({ type: 'events_redacted', payload: { seqs: [] } }), false],
  ['subscribed', { action: 'subscribed', collections: [ID], event_types: [] }, true],
  ['heartbeat_ack', { action: 'heartbeat_ack' }, true],
  ['error with reason', { action: 'error', reason: 'invalid_json', message: 'm' }, true],
  ['subscribe_error with reason', { action: 'subscribe_error', reason: 'collection_not_found' }, true],
  ['ingestion_progress without user_stage', event({ payload: { ...progress, user_stage: undefined } }), false],
  ['memory_unconfident with an ingestion payload', event({ type: 'memory_unconfident' }), false],
  ['negative seq', event({ seq: -1 }), false],
  ['signature with another scheme', event({ signature: { ...signature, scheme: 'hmac' } }), false],
  ['signature value not base64url', event({ signature: { ...signature, value: 'a+b/' } }), false],
  ['error without reason', { action: 'error' }, false],
  ['unknown action', { action: 'surprise' }, false],
];

for (const [name, frame, valid] of serverCases) {
  test(`server frame: ${name} is ${valid ? 'valid' : 'refused'}`, () => {
    assert.equal(server(JSON.parse(JSON.stringify(frame))), valid, JSON.stringify(server.errors));
  });
}

test('client frames', () => {
  assert.ok(client({ action: 'subscribe', collections: [], event_types: [], last_ack_seq: 3 }));
  assert.ok(client({ action: 'ack', seq: 1 }));
  assert.ok(client({ action: 'heartbeat' }));
  assert.ok(!client({ action: 'ack' }));
  assert.ok(!client({ action: 'subscribe', collections: 'all', event_types: [] }));
});
