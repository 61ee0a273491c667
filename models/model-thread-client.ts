/**
 * The main side of a process's model thread (models/model-thread.ts): one thread per process runs
 * every model call, embeddings (models/embedder.ts) and speech windows (extractors/audio.ts) alike,
 * because onnxruntime-node used from two threads of one process crashed it. Both kinds go through
 * this one pool of one thread, which holds up to two tasks at once: the thread interleaves them at
 * their awaits, so a search's query embedding runs between two decoder steps of a speech window
 * instead of waiting seconds for the whole window.
 */
import { WorkerPool, type PoolObserver } from '../core/worker-pool.js';
import type { SpeechModel, SpeechModelSource } from '../extractors/audio.js';
import type { ModelTasks } from './model-tasks.js';

export type ModelThread = WorkerPool<ModelTasks>;

const modelThreadScript = new URL('./model-thread.js', import.meta.url);

/** An embedding call and a speech window at once (each kind runs one call at a time by itself). */
const TASKS_AT_ONCE = 2;

/** The process's model thread, started on its first task; `close()` ends it. */
export function openModelThread(observe?: PoolObserver): ModelThread {
  return new WorkerPool<ModelTasks>(modelThreadScript, 1, TASKS_AT_ONCE, 0, observe);
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
