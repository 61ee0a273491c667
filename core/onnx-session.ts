/**
 * Session options for every onnxruntime model of a process (embeddings, speech). Its thread pools
 * never spin: by default an idle intra-op thread busy-waits for the next piece of work, and on the
 * 2-core machines measured (docs/decisions.md) that spinning took the CPU the event loop, the
 * store and Temporal needed. A 1 KB passage cost 104-150 ms of CPU with spinning and 63-67 ms
 * without, and took less time too.
 */
export interface OnnxSessionOptions {
  intraOpNumThreads?: number;
  interOpNumThreads?: number;
  extra: { session: { intra_op: { allow_spinning: '0' }; inter_op: { allow_spinning: '0' } } };
}

/** `threads`: intra-op threads, 0 or absent for onnxruntime's own choice (one per core). */
export function onnxSessionOptions(threads?: number): OnnxSessionOptions {
  return {
    ...(threads ? { intraOpNumThreads: threads, interOpNumThreads: 1 } : {}),
    // Config entries of the session (onnxruntime_session_options_config_keys.h); the Node binding takes strings.
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  };
}
