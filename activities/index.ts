import { createIngestActivities, type IngestActivityDeps } from './ingest.js';

export function createActivities(deps: IngestActivityDeps) {
  return { ...createIngestActivities(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
export type { AppendStart, GraphProjectionInput, IngestActivityDeps, IngestInput, IndexResult, ReadResult, StageInput } from './ingest.js';
