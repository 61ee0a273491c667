/**
 * The model threads of a service process: the bulk thread runs speech windows and passage
 * embeddings side by side; the query thread runs query embeddings while the bulk thread is busy.
 * onnxruntime-node 1.21 aborted the process (a native HandleScope fatal error) as soon as two
 * threads ran it at once; the second test is the one that failed then.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../config/index.js';
import { createTranscriber } from '../extractors/audio.js';
import { commandAvailable, speakWav } from '../test/fixtures/media.js';
import { loadEmbedder } from './embedder.js';
import { WorkerPoolClosedError } from '../core/worker-pool.js';
import { openModelThread, openQueryModelThread, speechModelOnThread } from './model-thread-client.js';

const config = loadConfig();
/** One model call of 32 long passages: a second or more on these machines. */
const LONG_PASSAGES = Array.from(
  { length: 32 },
  (_, at) => `Passage ${at}: ${'the design team met on Tuesday to plan the launch. '.repeat(8)}`,
);
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

  it('embeds a query on the query thread while the bulk thread runs a long passage call, with the same vectors as one thread', async () => {
    const queryThread = openQueryModelThread();
    after(() => queryThread.close());
    const options = { modelId: config.EMBEDDING_MODEL, modelsDir, allowRemoteModels: false };
    const shared = await loadEmbedder({ ...options, thread });
    const split = await loadEmbedder({ ...options, thread, queryThread });
    const question = 'when did the design team meet';

    const order: string[] = [];
    // One call of 32 long passages (a second or more here), posted before the query.
    const passageCall = split.embedPassages(LONG_PASSAGES, { maxPerCall: 32 }).finally(() => order.push('passages'));
    const query = split.embedQuery(question).finally(() => order.push('query'));
    const [splitPassages, splitQuery] = await Promise.all([passageCall, query]);
    assert.deepEqual(order, ['query', 'passages'], 'the query did not wait for the passage call');

    // Two threads, the same model: bit for bit the vectors of the one shared thread.
    assert.deepEqual(splitQuery, await shared.embedQuery(question));
    assert.deepEqual(splitPassages, await shared.embedPassages(LONG_PASSAGES));
  });

  it('closes a model thread in the middle of a passage call without aborting the process', async () => {
    const closing = openModelThread();
    const embedder = await loadEmbedder({ modelId: config.EMBEDDING_MODEL, modelsDir, allowRemoteModels: false, thread: closing });
    const call = embedder.embedPassages(LONG_PASSAGES, { maxPerCall: 32 });
    const outcome = call.then(
      () => 'answered',
      (error: unknown) => (error instanceof WorkerPoolClosedError ? 'closed' : `failed: ${String(error)}`),
    );
    // The call is on the thread now (a second or more); ending the thread under it aborted the
    // process (onnxruntime's binding throws a C++ exception nobody catches). Close waits for it.
    await new Promise((resolve) => setTimeout(resolve, 150));
    await closing.close();
    assert.equal(await outcome, 'closed', 'the caller is told the pool closed');
    await assert.rejects(
      closing.run(
        'embed',
        { source: { modelId: config.EMBEDDING_MODEL, modelsDir, allowRemoteModels: false }, texts: ['x'] },
        { key: 'a' },
      ),
      WorkerPoolClosedError,
    );
  });
});
