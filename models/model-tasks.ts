/**
 * What the model thread does (models/model-thread.ts): runs the embedding model, loaded on its first
 * task. The embedder of a process that passes `ownThread` (models/embedder.ts) sends each merged
 * model call here, so onnxruntime runs on this one thread only and never blocks the event loop.
 */
import { loadModelRunner, type ModelSource } from './embedder.js';

let loaded: { key: string; run: Promise<(texts: string[]) => Promise<Float32Array[]>> } | null = null;

function runnerFor(source: ModelSource): Promise<(texts: string[]) => Promise<Float32Array[]>> {
  const key = JSON.stringify(source);
  if (loaded?.key !== key) {
    // One model per thread: a process has one embedder.
    const run = loadModelRunner(source);
    loaded = { key, run };
    run.catch(() => {
      if (loaded?.run === run) loaded = null; // the next task tries again
    });
  }
  return loaded.run;
}

export const modelTasks = {
  /** One model call: a unit vector per text (the vectors cross back by structured clone). */
  embed: async (input: { source: ModelSource; texts: string[] }): Promise<Float32Array[]> => (await runnerFor(input.source))(input.texts),
};

export type ModelTasks = typeof modelTasks;
