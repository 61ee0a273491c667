/**
 * The sentence embedder, loaded once per process. @huggingface/transformers (v3) was chosen over
 * @xenova/transformers 2.17 by measurement on these machines (docs/decisions.md): same model
 * folders, about 1.5x the throughput. Weights come from MODELS_DIR; remote loading is off unless
 * explicitly allowed, so nothing is downloaded when a local copy is configured.
 */
import { embeddingBatchDuration, embeddingBatchSize } from '../core/metrics.js';
import { env, pipeline, type FeatureExtractionPipeline } from '@huggingface/transformers';

export interface Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  embedPassages(texts: string[]): Promise<Float32Array[]>;
  embedQuery(text: string): Promise<Float32Array>;
}

export interface EmbedderOptions {
  modelId: string;
  modelsDir: string | undefined;
  allowRemoteModels: boolean;
  cacheDir?: string;
  /** Upper bound of texts per model call when concurrent requests are merged. */
  maxBatchSize?: number;
}

/** e5 models were trained with these prefixes; without them retrieval drops sharply. */
function prefixesFor(modelId: string): { query: string; passage: string } {
  return /(^|\/)e5-/i.test(modelId) ? { query: 'query: ', passage: 'passage: ' } : { query: '', passage: '' };
}

export async function loadEmbedder(options: EmbedderOptions): Promise<Embedder> {
  if (options.modelsDir) {
    env.localModelPath = options.modelsDir;
    env.allowLocalModels = true;
  }
  env.allowRemoteModels = options.allowRemoteModels || !options.modelsDir;
  if (options.cacheDir) env.cacheDir = options.cacheDir;
  const extractor: FeatureExtractionPipeline = await pipeline('feature-extraction', options.modelId, { dtype: 'q8' });
  const prefixes = prefixesFor(options.modelId);

  async function run(texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const stopTimer = embeddingBatchDuration.startTimer();
    const output = await extractor(texts, { pooling: 'mean', normalize: true });
    stopTimer();
    embeddingBatchSize.observe(texts.length);
    const [rows, dims] = output.dims as [number, number];
    const data = output.data as Float32Array;
    const vectors: Float32Array[] = [];
    for (let row = 0; row < rows; row++) vectors.push(data.slice(row * dims, (row + 1) * dims));
    output.dispose();
    return vectors;
  }

  const batched = microBatch(run, options.maxBatchSize ?? 32);
  const probe = await run(['dimension probe']);
  const dimensions = probe[0]?.length ?? 0;
  return {
    modelId: options.modelId,
    dimensions,
    embedPassages: (texts) => batched(texts.map((text) => prefixes.passage + text)),
    embedQuery: async (text) => {
      const [vector] = await batched([prefixes.query + text]);
      if (!vector) throw new Error('embedder returned no vector');
      return vector;
    },
  };
}

/**
 * Merges concurrent requests into one model call. While a batch runs, new requests queue; when
 * it finishes they all go in the next call. An idle embedder answers at once (no added delay),
 * and a busy one (several memories ingesting) gets the throughput of batched inference.
 */
export function microBatch(
  run: (texts: string[]) => Promise<Float32Array[]>,
  maxBatchSize: number,
): (texts: string[]) => Promise<Float32Array[]> {
  interface Request {
    texts: string[];
    resolve: (vectors: Float32Array[]) => void;
    reject: (error: unknown) => void;
  }
  const queue: Request[] = [];
  let running = false;

  async function pump(): Promise<void> {
    if (running) return;
    running = true;
    try {
      while (queue.length > 0) {
        const batch: Request[] = [];
        let size = 0;
        while (queue.length > 0 && (batch.length === 0 || size + queue[0]!.texts.length <= maxBatchSize)) {
          const next = queue.shift()!;
          batch.push(next);
          size += next.texts.length;
        }
        try {
          const vectors = await run(batch.flatMap((request) => request.texts));
          let offset = 0;
          for (const request of batch) {
            request.resolve(vectors.slice(offset, offset + request.texts.length));
            offset += request.texts.length;
          }
        } catch (error) {
          for (const request of batch) request.reject(error);
        }
      }
    } finally {
      running = false;
    }
  }

  return (texts) =>
    new Promise<Float32Array[]>((resolve, reject) => {
      queue.push({ texts, resolve, reject });
      void pump();
    });
}
