/**
 * Temporal failure types shared by activities and the workflow. Kept in a file with no imports
 * so the deterministic workflow bundle can use it.
 */
/** The content can never be ingested (empty, too large, undecodable): do not retry. */
export const BAD_CONTENT = 'BadContent';
/** The memory was deleted while its workflow ran: stop quietly. */
export const MEMORY_DELETED = 'MemoryDeleted';
/** Workflow-level failure recorded after markFailed, visible to operators in the Temporal UI. */
export const INGESTION_FAILED = 'IngestionFailed';
