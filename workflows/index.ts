export { ingestMemory, projectMemoryGraph, type IngestOutcome } from './ingest-memory.js';
