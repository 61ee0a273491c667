export { ingestMemory, type IngestOutcome } from './ingest-memory.js';
