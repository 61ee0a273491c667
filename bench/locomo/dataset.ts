/**
 * LoCoMo (Maharana et al., ACL 2024), read from `../shared/bench-data/locomo/` (CC BY-NC 4.0: never
 * copied into this repository). Pure: the file's shape → sessions to ingest and questions to ask,
 * as the dataset's README describes the measurement:
 *   - one collection per conversation, one `conversation` memory per session;
 *   - each turn a message "<speaker>: <text>" (plus the image caption when there is one), speaker_a
 *     as `user`, speaker_b as `assistant`, the session's date as the memory's `occurred_at` and each
 *     message's `timestamp`;
 *   - every question of categories 1 to 4 with evidence.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../config/index.js';

export const CATEGORY_NAMES: Record<number, string> = { 1: 'multi_hop', 2: 'temporal', 3: 'open_domain', 4: 'single_hop' };

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface RawSample {
  sample_id: string;
  conversation: Record<string, unknown> & { speaker_a: string; speaker_b: string };
  qa: { question: string; answer?: unknown; evidence?: string[]; category: number }[];
}

export interface LocomoTurn {
  diaId: string;
  role: 'user' | 'assistant';
  /** The message content as ingested: "<speaker>: <text>" (+ caption). */
  content: string;
}

export interface LocomoSession {
  index: number;
  /** The session's date as ISO 8601 (UTC: the dataset gives no zone). */
  occurredAt: string;
  turns: LocomoTurn[];
}

export interface LocomoQuestion {
  sampleId: string;
  question: string;
  category: number;
  /** The evidence turns' message contents (what must appear in a hit). */
  evidence: string[];
}

export interface LocomoConversation {
  sampleId: string;
  speakers: [string, string];
  sessions: LocomoSession[];
  questions: LocomoQuestion[];
}

export const defaultLocomoFile = (): string =>
  process.env.BENCH_LOCOMO_FILE ?? path.join(projectRoot(), '..', 'shared', 'bench-data', 'locomo', 'locomo-dev.json');

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" → "2023-05-08T13:56:00.000Z". */
export function parseSessionDate(value: string): string {
  const match = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(value);
  if (!match) throw new Error(`unrecognised LoCoMo session date: ${value}`);
  const [, hour, minute, half, day, monthName, year] = match;
  const month = MONTHS.indexOf(monthName!.toLowerCase());
  if (month < 0) throw new Error(`unrecognised month in LoCoMo session date: ${value}`);
  const hours = (Number(hour) % 12) + (half!.toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(year), month, Number(day), hours, Number(minute))).toISOString();
}

export const turnContent = (turn: RawTurn): string =>
  `${turn.speaker}: ${turn.text}${turn.blip_caption ? ` [shares ${turn.blip_caption}]` : ''}`;

export function parseLocomo(json: unknown): LocomoConversation[] {
  return (json as RawSample[]).map((sample) => {
    const conversation = sample.conversation;
    const sessions: LocomoSession[] = [];
    for (let index = 1; Array.isArray(conversation[`session_${index}`]); index++) {
      const turns = conversation[`session_${index}`] as RawTurn[];
      if (turns.length === 0) continue;
      sessions.push({
        index,
        occurredAt: parseSessionDate(String(conversation[`session_${index}_date_time`])),
        turns: turns.map((turn) => ({
          diaId: turn.dia_id,
          role: turn.speaker === conversation.speaker_a ? 'user' : 'assistant',
          content: turnContent(turn),
        })),
      });
    }
    const byId = new Map(sessions.flatMap((session) => session.turns.map((turn) => [turn.diaId, turn.content] as const)));
    const questions: LocomoQuestion[] = [];
    for (const qa of sample.qa) {
      if (!(qa.category in CATEGORY_NAMES)) continue;
      // Ids exactly as written; a malformed one ("D:11:26", "D8:6; D9:17") names no turn and is left
      // out, as in the measurement the issue quotes (782 questions on this half).
      const evidence = [...new Set((qa.evidence ?? []).flatMap((id) => byId.get(id) ?? []))];
      if (evidence.length === 0) continue;
      questions.push({ sampleId: sample.sample_id, question: qa.question, category: qa.category, evidence });
    }
    return { sampleId: sample.sample_id, speakers: [conversation.speaker_a, conversation.speaker_b], sessions, questions };
  });
}

export const loadLocomo = (file = defaultLocomoFile()): LocomoConversation[] => parseLocomo(JSON.parse(readFileSync(file, 'utf8')));
