/**
 * How this process's garbage collector treats Buffer memory, set once when a service starts.
 *
 * Why: on Node 24 (V8 13.6) short-lived Buffers are reclaimed by mark-compacts of the whole heap
 * instead of scavenges. New space grew from 8 to 32 MB there, which moved the scavenge that frees
 * young ArrayBuffers to 128 MB of them, above the fixed 64 MB of external memory that starts a
 * major collection (nodejs/node#61967 and #63863). A device search sends its snapshot's megabytes
 * on every call, and request bodies' socket pieces and MongoDB replies are all such Buffers:
 * measured on the bench's device scenario (1,000 memories, a 2.8 MiB snapshot), a mark-compact of
 * the 120 MB API heap ran every 24 calls, each with 50-60 ms of marking on the event loop, and they
 * were the whole p95. Counting external memory in V8's global limit instead
 * (`--external-memory-accounted-in-global-limit`) ended those collections too, but let garbage
 * Buffers pile up in proportion to the index's live memory: 400 MB more peak RSS while a 100k-chunk
 * collection loaded (docs/decisions.md).
 *
 * The flag does two things, and only one of them can be set from inside a running process:
 * - the young-ArrayBuffer scavenge reads it whenever it decides, so setting it at start-up
 *   (`tuneGarbageCollector`) frees those Buffers in scavenges again;
 * - new space's own largest size is fixed when the heap is made, before any code runs: set later,
 *   the flag leaves it at Node's 128 MB (measured: a 100k-chunk cold load ended with 120 MB of new
 *   space in use and 620 MB of RSS, against 32 MB and 550 MB with the flag on the command line).
 *   So the project starts every service process with `SERVICE_NODE_FLAGS` (package.json's scripts,
 *   dev/embedded.ts for the stacks it spawns, the image's command).
 */
import { setFlagsFromString } from 'node:v8';

/** The V8 flag, as Node's `--v8-options` lists it: new space's largest capacity, in MB. */
export const NEW_SPACE_CAPACITY_FLAG = '--scavenger-max-new-space-capacity-mb=8';

/** Node's command-line flags for a service process (Node refuses them in NODE_OPTIONS). */
export const SERVICE_NODE_FLAGS: readonly string[] = [NEW_SPACE_CAPACITY_FLAG];

/** Whether this process was started with the flags above, so that new space is capped too. */
export function startedWithServiceFlags(execArgv: readonly string[] = process.execArgv): boolean {
  return SERVICE_NODE_FLAGS.every((flag) => execArgv.includes(flag));
}

/**
 * Applies the collector settings above to the whole process (V8 flags are per process, so worker
 * threads get them too). Setting the flag again changes nothing, so a second service in one process
 * may call it too. A V8 that does not know the flag says so on stderr and goes on.
 */
export function tuneGarbageCollector(): void {
  setFlagsFromString(NEW_SPACE_CAPACITY_FLAG);
}
