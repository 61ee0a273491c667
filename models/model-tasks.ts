/**
 * What the model thread does (models/model-thread.ts): runs the embedding model and the Whisper
 * speech model, each loaded on its first task. A service process sends every model call to its
 * model threads (models/model-thread-client.ts), so onnxruntime never runs on an event loop that
 * answers requests or heartbeats.
 */
import { localSpeechModel, type SpeechModel, type SpeechModelSource, type WindowTokens } from '../extractors/audio.js';
import { loadModelRunner, type ModelSource } from './embedder.js';

let embedding: { key: string; run: Promise<(texts: string[]) => Promise<Float32Array[]>> } | null = null;
let speech: { key: string; model: SpeechModel } | null = null;

function runnerFor(source: ModelSource): Promise<(texts: string[]) => Promise<Float32Array[]>> {
  const key = JSON.stringify(source);
  if (embedding?.key !== key) {
    // One embedding model per thread: a process has one embedder.
    const run = loadModelRunner(source);
    embedding = { key, run };
    run.catch(() => {
      if (embedding?.run === run) embedding = null; // the next task tries again
    });
  }
  return embedding.run;
}

/** One speech model per thread (it loads lazily and retries a failed load by itself). */
function speechModelFor(source: SpeechModelSource): SpeechModel {
  const key = JSON.stringify(source);
  if (speech?.key !== key) {
    void speech?.model.close();
    speech = { key, model: localSpeechModel(source) };
  }
  return speech.model;
}

export const modelTasks = {
  /** One model call: a unit vector per text (the vectors cross back by structured clone). */
  embed: async (input: { source: ModelSource; texts: string[] }): Promise<Float32Array[]> => (await runnerFor(input.source))(input.texts),
  /** Loads the speech model now. */
  loadSpeech: async (input: { source: SpeechModelSource }): Promise<void> => speechModelFor(input.source).load(),
  /** Token ids of one audio window (at most 30 s of 16 kHz samples). */
  transcribeWindow: (input: { source: SpeechModelSource; audio: Float32Array }): Promise<bigint[]> =>
    speechModelFor(input.source).transcribeWindow(input.audio),
  /** The windows' tokens joined into timed segments (the Whisper tokenizer's overlap resolution). */
  mergeWindows: (input: { source: SpeechModelSource; outputs: WindowTokens[]; duration: number }) =>
    speechModelFor(input.source).mergeWindows(input.outputs, input.duration),
  /** Releases the speech model's sessions (after a window in progress). */
  closeSpeech: async (_input: undefined): Promise<void> => {
    const current = speech;
    speech = null;
    await current?.model.close();
  },
};

export type ModelTasks = typeof modelTasks;
