/**
 * Wire frames of the live-events WebSocket (spec: Events → Client frames, Server frames, Event
 * types) and a tolerant parser for server frames: required fields are checked, unknown fields
 * and unknown event types pass through untouched (they are forward-compatible extensions, and
 * every field of an event frame is covered by its signature).
 */
import type { ConfidenceFigures, UnconfidentReason } from '../core/search-confidence.js';

// ---- client → server ------------------------------------------------------------------------

export interface SubscribeFrame {
  action: 'subscribe';
  /** Collection ids; empty = every collection the ticket holder can read. */
  collections: string[];
  /** Event types; empty = all. */
  event_types: string[];
  /** Replay cursor: the server sends events with seq > last_ack_seq. */
  last_ack_seq?: number;
}

export interface AckFrame {
  action: 'ack';
  seq: number;
}

export type ClientFrame = SubscribeFrame | AckFrame | { action: 'heartbeat' } | { action: 'unsubscribe' };

// ---- server → client ------------------------------------------------------------------------

/** The signature object of a signed event (spec: Signature object). */
export interface EventSignatureObject {
  scheme: string;
  algorithm: string;
  canonicalization: string;
  key_id: string;
  signed_fields: string[];
  encoding: string;
  value: string;
}

/** An event frame exactly as received (unknown fields kept: they are signed too). */
export interface EventFrame<P extends Record<string, unknown> = Record<string, unknown>> {
  action: 'event';
  seq: number;
  event_id: string;
  type: string;
  collection_id: string;
  payload: P;
  ts: string;
  signature?: EventSignatureObject;
  [field: string]: unknown;
}

export type UserStage = 'reading' | 'structuring' | 'indexing' | 'complete' | 'failed';

export interface IngestionProgressPayload {
  engram_id: string;
  stage: string;
  /** One of UserStage; a newer server may send others. */
  user_stage: UserStage | (string & {});
  current: number;
  total: number;
  message: string | null;
  [field: string]: unknown;
}

export interface MemoryUnconfidentPayload extends ConfidenceFigures {
  query: string;
  /** One of UnconfidentReason; a newer server may send others. */
  reason: UnconfidentReason | (string & {});
  [field: string]: unknown;
}

export interface SubscribedFrame {
  action: 'subscribed';
  collections: string[];
  event_types: string[];
  [field: string]: unknown;
}

export interface HeartbeatAckFrame {
  action: 'heartbeat_ack';
  [field: string]: unknown;
}

export interface ErrorFrame {
  action: 'error' | 'subscribe_error';
  reason: string;
  message?: string;
  /** With reason `replay_gap`: the oldest retained seq; the server continues from it. */
  oldest_seq?: number;
  [field: string]: unknown;
}

/** A frame with an action this client does not know (a newer server); passed to onControl. */
export interface UnknownServerFrame {
  action: string;
  [field: string]: unknown;
}

/** Every server frame except `event`. They are not signed. */
export type ControlFrame = SubscribedFrame | HeartbeatAckFrame | ErrorFrame | UnknownServerFrame;

export type ServerFrame = EventFrame | ControlFrame;

// ---- parsing --------------------------------------------------------------------------------

export type ParseResult = { ok: true; frame: ServerFrame } | { ok: false; problem: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** Parses one text message from the server. Never throws. */
export function parseServerFrame(text: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'not valid JSON' };
  }
  if (!isRecord(value)) return { ok: false, problem: 'not a JSON object' };
  const action = value.action;
  if (typeof action !== 'string') return { ok: false, problem: 'no string `action`' };
  switch (action) {
    case 'event': {
      const { seq, event_id: eventId, type, collection_id: collectionId, payload, ts, signature } = value;
      if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return { ok: false, problem: 'event without an integer `seq`' };
      if (typeof eventId !== 'string') return { ok: false, problem: `event ${seq} without a string \`event_id\`` };
      if (typeof type !== 'string') return { ok: false, problem: `event ${seq} without a string \`type\`` };
      if (typeof collectionId !== 'string') return { ok: false, problem: `event ${seq} without a string \`collection_id\`` };
      if (!isRecord(payload)) return { ok: false, problem: `event ${seq} without an object \`payload\`` };
      if (typeof ts !== 'string') return { ok: false, problem: `event ${seq} without a string \`ts\`` };
      // A malformed signature is kept as is: verification rejects it with a precise error.
      if (signature !== undefined && !isRecord(signature)) return { ok: false, problem: `event ${seq} with a non-object \`signature\`` };
      return { ok: true, frame: value as EventFrame };
    }
    case 'subscribed':
      if (!isStringArray(value.collections) || !isStringArray(value.event_types)) {
        return { ok: false, problem: 'subscribed frame without `collections` / `event_types` arrays' };
      }
      return { ok: true, frame: value as SubscribedFrame };
    case 'error':
    case 'subscribe_error':
      if (typeof value.reason !== 'string') return { ok: false, problem: `${action} frame without a string \`reason\`` };
      return { ok: true, frame: value as ErrorFrame };
    default:
      return { ok: true, frame: value as UnknownServerFrame };
  }
}

export const isEventFrame = (frame: ServerFrame): frame is EventFrame => frame.action === 'event';

/** An ingestion_progress event whose payload has the documented field types. */
export function isIngestionProgress(frame: EventFrame): frame is EventFrame<IngestionProgressPayload> {
  const p = frame.payload;
  return (
    frame.type === 'ingestion_progress' &&
    typeof p.engram_id === 'string' &&
    typeof p.stage === 'string' &&
    typeof p.user_stage === 'string' &&
    typeof p.current === 'number' &&
    typeof p.total === 'number' &&
    (p.message === null || typeof p.message === 'string')
  );
}

/** A memory_unconfident event whose payload has at least `query` and `reason` as strings. */
export function isMemoryUnconfident(frame: EventFrame): frame is EventFrame<MemoryUnconfidentPayload> {
  return frame.type === 'memory_unconfident' && typeof frame.payload.query === 'string' && typeof frame.payload.reason === 'string';
}
