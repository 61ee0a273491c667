/**
 * One model thread runs both models of a service process: speech windows and embeddings side by
 * side on the thread, which is what used to crash a process when they ran on two of its threads.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../config/index.js';
import { createTranscriber } from '../extractors/audio.js';
import { commandAvailable, speakWav } from '../test/fixtures/media.js';
import { loadEmbedder } from './embedder.js';
import { openModelThread, speechModelOnThread } from './model-thread-client.js';

const config = loadConfig();
const modelsDir = config.MODELS_DIR;
const haveModels =
  modelsDir !== undefined &&
  existsSync(path.join(modelsDir, 'Xenova/whisper-tiny.en', 'onnx', 'encoder_model_quantized.onnx')) &&
  existsSync(path.join(modelsDir, config.EMBEDDING_MODEL));
const skip =
  (!haveModels && 'whisper-tiny.en or the embedding model not in MODELS_DIR') || (!commandAvailable('espeak-ng') && 'espeak-ng missing');

describe('the model thread', { skip }, () => {
  const thread = openModelThread();
  after(() => thread.close());

  it('transcribes and embeds on one thread at once, and a query embedding does not wait for a whole speech window', async () => {
    const embedder = await loadEmbedder({ modelId: config.EMBEDDING_MODEL, modelsDir, allowRemoteModels: false, thread });
    const speech = speechModelOnThread(thread, { modelsDir, allowRemoteModels: false });
    const order: string[] = [];
    let windowSent!: () => void;
    const windowRuns = new Promise<void>((resolve) => (windowSent = resolve));
    const transcriber = createTranscriber({
      modelsDir,
      allowRemoteModels: false,
      model: {
        ...speech,
        transcribeWindow: (audio, signal) => {
          const window = speech.transcribeWindow(audio, signal); // posted to the thread now
          windowSent();
          return window.finally(() => order.push('window'));
        },
      },
    });
    await transcriber.load();
    const wav = await speakWav('Please schedule a meeting with the design team for next Tuesday');

    const transcription = transcriber.transcribe(wav, 'audio/wav');
    await windowRuns;
    // Sent after the window: the thread takes it between two of the window's model steps.
    const query = embedder.embedQuery('when is the design meeting').finally(() => order.push('query'));
    const [extraction, vector] = await Promise.all([transcription, query]);

    assert.match(extraction.sections.map((section) => section.text.toLowerCase()).join(' '), /meeting/);
    assert.equal(vector.length, embedder.dimensions);
    assert.ok(Math.abs(Math.hypot(...vector) - 1) < 1e-3, 'a unit vector');
    assert.deepEqual(order, ['query', 'window'], 'the query embedding answered while the speech window still ran');
    await transcriber.close();
  });
});
