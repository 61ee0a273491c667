/**
 * The sentence embedder, loaded once per process. @huggingface/transformers (v3) was chosen over
 * @xenova/transformers 2.17 by measurement on these machines (docs/decisions.md): same model
 * folders, about 1.5x the throughput. Weights come from MODELS_DIR; remote loading is off unless
 * explicitly allowed, so nothing is downloaded when a local copy is configured.
 */
import { embeddingBatchDuration, embeddingBatchSize } from '../core/metrics.js';
import { onnxSessionOptions } from '../core/onnx-session.js';
import { env, pipeline, type FeatureExtractionPipeline } from '@huggingface/transformers';
import type { ModelThread } from './model-thread-client.js';

export interface Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  /** `signal`: when it aborts, the texts not yet embedded are dropped and the call rejects. */
  embedPassages(
    texts: string[],
    options?: {
      signal?: AbortSignal | undefined;
      maxPerCall?: number;
      coalesceMs?: number;
      until?: Promise<unknown>;
      /**
       * A few short texts that a stage waits on (entity names): they may run on the query thread
       * while it has nothing to do, rather than wait behind the passage call in flight.
       */
      short?: boolean;
    },
  ): Promise<Float32Array[]>;
  /** Goes into the next model call, ahead of queued passages. */
  embedQuery(text: string): Promise<Float32Array>;
}

export interface EmbedderOptions {
  modelId: string;
  modelsDir: string | undefined;
  allowRemoteModels: boolean;
  cacheDir?: string;
  /** Upper bound of texts per model call when concurrent requests are merged. */
  maxBatchSize?: number;
  /** onnxruntime intra-op threads (0 or absent: its own choice, the cores); its threads never spin (core/onnx-session.ts). */
  threads?: number;
  /**
   * Run the model on the process's model thread (models/model-thread-client.ts), never on the
   * caller's: a model call then never blocks the event loop.
   */
  thread?: ModelThread;
  /**
   * Run query embeddings on this thread instead (a process that answers searches): a search then
   * waits for no passage call, which runs to its end once started (a device create's passage, the
   * worker's batch). Queries still share calls with each other.
   */
  queryThread?: ModelThread;
}

/** e5 models were trained with these prefixes; without them retrieval drops sharply. */
function prefixesFor(modelId: string): { query: string; passage: string } {
  return /(^|\/)e5-/i.test(modelId) ? { query: 'query: ', passage: 'passage: ' } : { query: '', passage: '' };
}

/** What loads the model: the same on the caller's thread and on the model thread. */
export type ModelSource = Omit<EmbedderOptions, 'maxBatchSize' | 'thread' | 'queryThread'>;

/** Loads the model and answers one model call: texts in, one unit vector per text out. */
export async function loadModelRunner(options: ModelSource): Promise<(texts: string[]) => Promise<Float32Array[]>> {
  if (options.modelsDir) {
    env.localModelPath = options.modelsDir;
    env.allowLocalModels = true;
  }
  env.allowRemoteModels = options.allowRemoteModels || !options.modelsDir;
  if (options.cacheDir) env.cacheDir = options.cacheDir;
  // onnxruntime-node's run blocks the calling thread for the whole batch: a service process runs it
  // on its model thread (EmbedderOptions.thread).
  const model: FeatureExtractionPipeline = await pipeline('feature-extraction', options.modelId, {
    dtype: 'q8',
    session_options: onnxSessionOptions(options.threads),
  });
  const embedRun = async (texts: string[]): Promise<Float32Array[]> => {
    const output = await model(texts, { pooling: 'mean', normalize: true });
    const [rows, dims] = output.dims as [number, number];
    const data = output.data as Float32Array;
    const vectors: Float32Array[] = [];
    for (let row = 0; row < rows; row++) vectors.push(data.slice(row * dims, (row + 1) * dims));
    output.dispose();
    return vectors;
  };
  return async (texts: string[]): Promise<Float32Array[]> => {
    if (texts.length === 0) return [];
    // A batch is padded to its longest text: one call mixing a 12-token turn with a 250-token chunk
    // cost 3x the CPU of the same texts run by length (docs/decisions.md), so texts of similar
    // length run together.
    const lengths = texts.map((text) => Math.min(MAX_TOKENS, model.tokenizer.encode(text).length));
    const vectors: Float32Array[] = new Array<Float32Array>(texts.length);
    for (const group of lengthGroups(lengths)) {
      const out = await embedRun(group.map((at) => texts[at]!));
      group.forEach((at, row) => (vectors[at] = out[row]!));
    }
    return vectors;
  };
}

/** The encoders used here truncate at 512 tokens; a longer text costs what 512 do. */
const MAX_TOKENS = 512;

/**
 * Padded tokens (longest text × texts) one batch holds at most. Past about a thousand a batch costs
 * more per text, not less: e5-small-v2 on these machines (2026-11-27, CPU ms per text) took 40 for
 * ~190-token passages in fours and 67-72 in batches of 16-32, and 20-21 for ~95-token ones in fours
 * or eights against 30-43 in 16-32; ~49-token texts still gained up to 32 (19 alone, 13 in 32).
 */
export const BATCH_PADDED_TOKENS = 1024;

/**
 * Splits one model call's texts (their token counts) into runs of similar length, each run one
 * batch: a batch costs about its longest text times its size, so texts join a run while that
 * padded size stays within `slack` of the tokens they hold and within `maxPadded` tokens. Runs
 * still share a call's fixed cost when lengths are alike (8 texts of 40 tokens in one batch took
 * half the CPU of 8 calls). Returns the texts' positions, shortest first.
 */
export function lengthGroups(lengths: readonly number[], slack = 1.3, maxPadded = BATCH_PADDED_TOKENS): number[][] {
  const order = lengths.map((_, at) => at).sort((a, b) => lengths[a]! - lengths[b]!);
  const groups: number[][] = [];
  let group: number[] = [];
  let tokens = 0;
  for (const at of order) {
    const length = Math.max(1, lengths[at]!);
    // Sorted ascending, so this text would be the run's longest.
    const padded = length * (group.length + 1);
    if (group.length > 0 && (padded > slack * (tokens + length) || padded > maxPadded)) {
      groups.push(group);
      group = [];
      tokens = 0;
    }
    group.push(at);
    tokens += length;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

export async function loadEmbedder(options: EmbedderOptions): Promise<Embedder> {
  const { maxBatchSize, thread, queryThread, ...source } = options;
  // A thread loads the model on its first task; each micro-batcher below runs one call at a time.
  const onThread =
    (modelThread: ModelThread) =>
    (texts: string[]): Promise<Float32Array[]> =>
      modelThread.run('embed', { source, texts }, { key: 'embedding' });
  const callModel = thread ? onThread(thread) : await loadModelRunner(source);
  // Measured here, in the process's registry (a thread has its own, which nobody scrapes).
  const measured =
    (call: (texts: string[]) => Promise<Float32Array[]>) =>
    async (texts: string[]): Promise<Float32Array[]> => {
      if (texts.length === 0) return [];
      const stopTimer = embeddingBatchDuration.startTimer();
      const vectors = await call(texts);
      stopTimer();
      embeddingBatchSize.observe(texts.length);
      return vectors;
    };
  const run = measured(callModel);
  const prefixes = prefixesFor(options.modelId);
  const batched = microBatch(run, maxBatchSize ?? 32);
  const batchedQueries = queryThread ? microBatch(measured(onThread(queryThread)), maxBatchSize ?? 32) : undefined;
  const passages = passageLanes(batched, batchedQueries);
  // Both threads load the model now, so that neither the first memory nor the first search waits for it.
  const [probe] = await Promise.all([
    run(['dimension probe']),
    batchedQueries?.([prefixes.query + 'dimension probe'], { priority: 'query' }),
  ]);
  const dimensions = probe[0]?.length ?? 0;
  return {
    modelId: options.modelId,
    dimensions,
    embedPassages: (texts, options = {}) =>
      passages(
        texts.map((text) => prefixes.passage + text),
        {
          signal: options.signal,
          ...(options.maxPerCall ? { maxPerCall: options.maxPerCall } : {}),
          ...(options.coalesceMs ? { coalesceMs: options.coalesceMs } : {}),
          ...(options.until ? { until: options.until } : {}),
          ...(options.short ? { short: true } : {}),
        },
      ),
    embedQuery: async (text) => {
      const [vector] = await (batchedQueries ?? batched)([prefixes.query + text], { priority: 'query' });
      if (!vector) throw new Error('embedder returned no vector');
      return vector;
    },
  };
}

export interface EmbedOptions {
  /** Queries (one short text a search waits on) go into the next model call, ahead of passages. */
  priority?: 'query' | 'passage';
  /** When it aborts, the request's texts not yet embedded are dropped and it rejects with the reason. */
  signal?: AbortSignal | undefined;
  /**
   * At most this many of the request's texts go into one model call, and a call holding any of
   * them holds at most this many texts in all (default: a whole call). A model call blocks its
   * thread, so a large request keeps each call short: a query waits for at most one such call,
   * and an API process embedding on its event loop answers other requests between the calls.
   */
  maxPerCall?: number;
  /**
   * The request may wait up to this long for other requests to fill its model call (default 0: a
   * call starts at once). The ingestion worker sets it while several memories are in flight, so
   * their chunks share calls instead of each taking one or two; a call starts as soon as it is full
   * or a request without this allowance (a query) arrives.
   */
  coalesceMs?: number;
  /**
   * With `coalesceMs`: the request waits no longer than until this settles (its caller needs the
   * vectors then). A single-pass ingestion embeds its first chunks while it structures the memory,
   * so its request may wait for as long as that takes, gathering other memories' chunks meanwhile.
   */
  until?: Promise<unknown>;
}

/** A micro-batcher (microBatch): requests in, vectors out, and what it is doing. */
export type Batcher = ((texts: string[], options?: EmbedOptions) => Promise<Float32Array[]>) & {
  /** No call running and no request waiting. */
  idle(): boolean;
  /** A call of queries running, or a query waiting. */
  servingQueries(): boolean;
};

/**
 * Where passage requests run in a process with a query thread beside its passage thread. A short
 * request that may not wait for others (a lone memory's entity names, which its graph write waits
 * on) and would queue behind the passage call in flight goes to the query thread instead, unless
 * that thread is embedding a search's query or has one waiting: measured on single 1 KB memories,
 * the names waited about 30 ms for the memory's own chunk embedding. A query that comes meanwhile
 * waits for at most that short call. Everything else stays on the passage thread; so do names
 * allowed to coalesce (several memories in flight), which ride along in the passage calls: sent
 * to the query thread in calls of their own, they took 2.2 times the model calls and about 50 ms
 * more stack CPU per memory in the ingest bench.
 */
export function passageLanes(
  passageThread: Batcher,
  queryThread: Batcher | undefined,
): (texts: string[], options?: EmbedOptions & { short?: boolean }) => Promise<Float32Array[]> {
  return (texts, { short, ...options } = {}) =>
    short && !options.coalesceMs && queryThread && !passageThread.idle() && !queryThread.servingQueries()
      ? queryThread(texts, options)
      : passageThread(texts, options);
}

/**
 * Merges concurrent requests into model calls of at most `maxBatchSize` texts. While a call runs,
 * new requests queue; the next call takes the waiting queries alone, else passages round-robin by
 * request: a request larger than a call (a device create's 1,700 chunks) gives up its turn after
 * each call, so a search's query waits for at most the running call and its own, and other
 * requests interleave with it. An idle embedder answers at once; a busy one gets the throughput of
 * batched inference.
 */
export function microBatch(run: (texts: string[]) => Promise<Float32Array[]>, maxBatchSize: number): Batcher {
  interface Request {
    texts: string[];
    maxPerCall: number;
    /** Texts handed to model calls so far (the next one to take). */
    taken: number;
    /** Until when (performance.now()) it may wait for a fuller call; 0: it does not wait. */
    waitsUntil: number;
    /** Vectors received so far. */
    received: number;
    vectors: Float32Array[];
    done: boolean;
    resolve: (vectors: Float32Array[]) => void;
    reject: (error: unknown) => void;
  }
  const queries: Request[] = [];
  const passages: Request[] = [];
  let running = false;
  /** The running call holds queries (a call holds queries or passages, never both). */
  let runningQueries = false;
  let wakeUp: NodeJS.Timeout | null = null;
  let wakeUpAt = Number.POSITIVE_INFINITY;

  /**
   * When the next call should start: now (0), or the earliest time a waiting request stops waiting,
   * while every queued request is still willing to wait and their texts do not fill a call.
   */
  function startAt(): number {
    let queued = 0;
    let earliest = Number.POSITIVE_INFINITY;
    for (const lane of [queries, passages]) {
      for (const request of lane) {
        // A request that already had a call (a large one) never waits again.
        if (request.waitsUntil === 0 || request.taken > 0) return 0;
        queued += Math.min(request.texts.length, request.maxPerCall);
        earliest = Math.min(earliest, request.waitsUntil);
      }
    }
    if (queued >= maxBatchSize || earliest <= performance.now()) return 0;
    return earliest;
  }

  const finish = (request: Request, error?: unknown): void => {
    if (request.done) return;
    request.done = true;
    if (error === undefined) request.resolve(request.vectors);
    else request.reject(error);
  };

  /**
   * The lane the next call takes from: the waiting queries, which ride alone (a search waits for the
   * call running when it came and its own short one, not for passages of a long request, a device
   * create, besides), or else the passages.
   */
  const nextLane = (): Request[] => (queries.length > 0 ? queries : passages);

  /** The next call's texts from `lane`: its queries, or each waiting passage request in turn, a piece of each. */
  function nextBatch(lane: Request[]): { request: Request; from: number; count: number }[] {
    const parts: { request: Request; from: number; count: number }[] = [];
    let size = 0;
    // A call holding a request capped per call holds no more than that cap in all: four device
    // creates merged into one call of 16 long passages kept a search's query waiting seconds for it.
    let capacity = maxBatchSize;
    const inThisCall = new Set<Request>();
    while (lane.length > 0 && size < capacity) {
      const request = lane[0]!;
      // A request capped per call waits for the next call once it has its share of this one.
      if (inThisCall.has(request)) break;
      // Nor does it join a call already larger than its cap.
      if (size >= request.maxPerCall) break;
      capacity = Math.min(capacity, request.maxPerCall);
      inThisCall.add(request);
      const count = Math.min(request.texts.length - request.taken, capacity - size);
      parts.push({ request, from: request.taken, count });
      request.taken += count;
      size += count;
      lane.shift();
      // Not all taken: back to the end of the line, behind whoever else is waiting.
      if (request.taken < request.texts.length) lane.push(request);
    }
    return parts;
  }

  async function pump(): Promise<void> {
    if (running) return;
    running = true;
    try {
      for (;;) {
        const at = startAt();
        if (at > 0) {
          if (at < wakeUpAt) {
            if (wakeUp) clearTimeout(wakeUp);
            wakeUpAt = at;
            wakeUp = setTimeout(
              () => {
                wakeUp = null;
                wakeUpAt = Number.POSITIVE_INFINITY;
                void pump();
              },
              Math.max(1, Math.ceil(at - performance.now())),
            );
          }
          break;
        }
        if (wakeUp) {
          clearTimeout(wakeUp);
          wakeUp = null;
          wakeUpAt = Number.POSITIVE_INFINITY;
        }
        const lane = nextLane();
        runningQueries = lane === queries;
        const parts = nextBatch(lane);
        if (parts.length === 0) break;
        try {
          const vectors = await run(parts.flatMap(({ request, from, count }) => request.texts.slice(from, from + count)));
          let offset = 0;
          for (const { request, from, count } of parts) {
            for (let i = 0; i < count; i++) request.vectors[from + i] = vectors[offset + i]!;
            offset += count;
            request.received += count;
            if (request.received === request.texts.length) finish(request);
          }
        } catch (error) {
          for (const { request } of parts) {
            drop(request);
            finish(request, error);
          }
        }
      }
    } finally {
      running = false;
      runningQueries = false;
    }
  }

  function drop(request: Request): void {
    for (const lane of [queries, passages]) {
      const at = lane.indexOf(request);
      if (at >= 0) lane.splice(at, 1);
    }
  }

  const embed = (texts: string[], options: EmbedOptions = {}): Promise<Float32Array[]> =>
    new Promise<Float32Array[]>((resolve, reject) => {
      const { signal } = options;
      if (signal?.aborted) return reject(signal.reason);
      if (texts.length === 0) return resolve([]);
      const request: Request = {
        texts,
        maxPerCall: options.maxPerCall ?? maxBatchSize,
        taken: 0,
        waitsUntil: options.coalesceMs && options.priority !== 'query' ? performance.now() + options.coalesceMs : 0,
        received: 0,
        vectors: new Array(texts.length),
        done: false,
        resolve,
        reject,
      };
      if (signal) {
        const abandon = (): void => {
          drop(request);
          finish(request, signal.reason);
        };
        signal.addEventListener('abort', abandon, { once: true });
        const settle = (): void => signal.removeEventListener('abort', abandon);
        request.resolve = (vectors) => {
          settle();
          resolve(vectors);
        };
        request.reject = (error) => {
          settle();
          reject(error);
        };
      }
      (options.priority === 'query' ? queries : passages).push(request);
      if (request.waitsUntil > 0 && options.until) {
        const due = (): void => {
          request.waitsUntil = 0;
          void pump();
        };
        options.until.then(due, due);
      }
      void pump();
    });
  return Object.assign(embed, {
    idle: () => !running && queries.length === 0 && passages.length === 0,
    servingQueries: () => runningQueries || queries.length > 0,
  });
}
