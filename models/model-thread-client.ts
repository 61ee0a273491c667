/**
 * The main side of a process's model threads (models/model-thread.ts). One thread runs the bulk
 * model calls, passage embeddings (models/embedder.ts) and speech windows (extractors/audio.ts)
 * alike, and holds up to two tasks at once: it interleaves them at their awaits, so an embedding
 * call runs between two decoder steps of a speech window instead of waiting seconds for the whole
 * window. A process that answers searches has a second thread for query embeddings alone, so a
 * search never waits for a passage call (a device create's, or the worker's batch) to end: a
 * model call cannot be interrupted once it runs. onnxruntime-node 1.21 crashed a process that ran
 * it on two threads; 1.22, pinned in package.json, does not (docs/decisions.md).
 */
import { WorkerPool, type PoolObserver } from '../core/worker-pool.js';
import type { SpeechModel, SpeechModelSource } from '../extractors/audio.js';
import type { ModelTasks } from './model-tasks.js';

export type ModelThread = WorkerPool<ModelTasks>;

const modelThreadScript = new URL('./model-thread.js', import.meta.url);

/** An embedding call and a speech window at once (each kind runs one call at a time by itself). */
const TASKS_AT_ONCE = 2;

/** The process's bulk model thread, started on its first task; `close()` ends it. */
export function openModelThread(observe?: PoolObserver): ModelThread {
  return new WorkerPool<ModelTasks>(modelThreadScript, 1, TASKS_AT_ONCE, 0, observe);
}

/**
 * The thread of a process's query embeddings (EmbedderOptions.queryThread), started on its first
 * task; `close()` ends it. One call at a time: queries arriving meanwhile share the next call.
 */
export function openQueryModelThread(observe?: PoolObserver): ModelThread {
  return new WorkerPool<ModelTasks>(modelThreadScript, 1, 1, 0, observe);
}

/** Whisper on the model thread: the same calls as `localSpeechModel`, run there. */
export function speechModelOnThread(thread: ModelThread, source: SpeechModelSource): SpeechModel {
  const task = { key: 'speech' };
  return {
    modelId: source.modelId ?? 'Xenova/whisper-tiny.en',
    load: () => thread.run('loadSpeech', { source }, task),
    // A window still queued when the signal aborts is dropped; one running finishes on the thread.
    transcribeWindow: (audio, signal) => thread.run('transcribeWindow', { source, audio }, { ...task, signal }),
    mergeWindows: (outputs, duration) => thread.run('mergeWindows', { source, outputs, duration }, task),
    close: () => thread.run('closeSpeech', undefined, task).catch(() => undefined),
  };
}
