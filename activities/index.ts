import { createIngestActivities, type IngestActivityDeps } from './ingest.js';

export function createActivities(deps: IngestActivityDeps) {
  return { ...createIngestActivities(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
export type { IngestActivityDeps, IngestInput, IndexResult, ReadResult, StageInput } from './ingest.js';
