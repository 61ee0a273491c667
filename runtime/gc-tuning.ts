/**
 * How this process's garbage collector treats Buffer memory, set once when a service starts.
 *
 * Why: on Node 24 (V8 13.6) short-lived Buffers are reclaimed by mark-compacts of the whole heap
 * instead of scavenges. New space grew to 32 MB there, which moved the scavenge that frees young
 * ArrayBuffers to 128 MB of them, above the fixed 64 MB of external memory that starts a major
 * collection (nodejs/node#61967 and #63863; V8 counts external memory in its global limit by
 * default after 13.6). A device search sends its snapshot's megabytes on every call, and request
 * bodies' socket pieces and MongoDB replies are all such Buffers: measured on the bench's device
 * scenario (1,000 memories, a 2.8 MiB snapshot), a mark-compact of the 120 MB API heap ran every
 * 24 calls, each with 50-60 ms of marking on the event loop, and they were the whole p95. Counted in
 * the global limit, the collector weighs external memory against the heap as newer V8 does.
 */
import { setFlagsFromString } from 'node:v8';

/** The V8 flag, as Node's `--v8-options` lists it. */
export const EXTERNAL_MEMORY_IN_GLOBAL_LIMIT = '--external-memory-accounted-in-global-limit';

let applied = false;

/**
 * Applies the collector settings above to the whole process (V8 flags are per process, so worker
 * threads get them too). Idempotent. A V8 that does not know the flag says so on stderr and goes on.
 */
export function tuneGarbageCollector(): void {
  if (applied) return;
  applied = true;
  setFlagsFromString(EXTERNAL_MEMORY_IN_GLOBAL_LIMIT);
}
