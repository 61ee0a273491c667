/**
 * A small pool of tesseract.js workers (each one a worker thread running Tesseract as WebAssembly),
 * fully offline: the English LSTM data comes from the local @tesseract.js-data/eng package and
 * nothing is cached to disk. Workers start on first use, are reused, and are replaced when one
 * fails; no worker failure may take the process down.
 *
 * Two tesseract.js 7 behaviours shape this file:
 * - Without a local `langPath` it downloads the data from a CDN, and when loading the data fails
 *   it neither resolves nor rejects `createWorker` (and without an `errorHandler` it throws from
 *   a message handler, which kills the process). So the data file is checked before any worker
 *   starts, every worker gets an `errorHandler`, and a start that fails or hangs is ended here.
 * - It never listens for its worker thread's 'error' event (an error event without a listener
 *   is an uncaught exception), and its 'message' listener throws when Tesseract fails to
 *   initialise. The pool finds each worker's thread (node's 'worker' process event), listens for
 *   'error' and 'exit' itself and guards the 'message' listener.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Worker as ThreadWorker } from 'node:worker_threads';
import Tesseract from 'tesseract.js';
import { UnreadableContentError } from './types.js';

export interface OcrResult {
  text: string;
  /** Tesseract's mean word confidence, 0 to 100. */
  confidence: number;
}

export interface OcrPool {
  /** Upper bound of workers (and of images recognised at once). */
  readonly size: number;
  /** Workers running now (started lazily, so 0 before the first image). */
  readonly workers: number;
  /** Recognises text in an encoded image (PNG, JPEG, BMP, PNM, TIFF: whatever Leptonica reads). */
  recognize(image: Uint8Array): Promise<OcrResult>;
  /** Rejects queued and running jobs and ends every worker thread. The pool cannot be reused. */
  close(): Promise<void>;
}

export interface OcrPoolOptions {
  /** Worker count; default min(2, CPU cores). Each worker uses one core while recognising. */
  size?: number;
  /** Folder holding eng.traineddata.gz; default the one in @tesseract.js-data/eng (4.0.0_best_int). */
  langPath?: string;
  /** Longest one recognition may run before its worker is replaced; default 120 s. */
  jobTimeoutMs?: number;
  /** Longest a worker may take to start; default 30 s (it takes about 0.3 to 0.6 s). */
  startTimeoutMs?: number;
}

const LANGUAGE = 'eng';
/** After a worker fails to start while others run, wait this long before starting another. */
const START_RETRY_DELAY_MS = 30_000;

/** The local English LSTM data shipped by @tesseract.js-data/eng. */
export function defaultLangPath(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
}

/** Throws unless `langPath` is a local folder with a gzip-compressed eng.traineddata.gz. */
export function checkLanguageData(langPath: string): void {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(langPath)) {
    throw new Error(`OCR langPath must be a local folder, not a URL (${langPath}): OCR runs offline`);
  }
  const file = path.join(langPath, `${LANGUAGE}.traineddata.gz`);
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new Error(`OCR language data not found: ${file} is missing (install @tesseract.js-data/eng)`);
  }
  const head = Buffer.alloc(2);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, 2, 0);
  } finally {
    closeSync(fd);
  }
  if (size < 1024 || head[0] !== 0x1f || head[1] !== 0x8b) {
    throw new Error(`OCR language data is not a gzip-compressed traineddata file: ${file}`);
  }
}

interface Job {
  image: Uint8Array;
  resolve: (result: OcrResult) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Tesseract.Worker;
  thread: ThreadWorker | undefined;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
  /** Set once the slot is failed or closed: late events from it are ignored. */
  ended: boolean;
  detach: () => void;
}

export function createOcrPool(options: OcrPoolOptions = {}): OcrPool {
  const size = Math.max(1, Math.floor(options.size ?? Math.min(2, os.availableParallelism())));
  const langPath = options.langPath ?? defaultLangPath();
  const jobTimeoutMs = options.jobTimeoutMs ?? 120_000;
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  checkLanguageData(langPath);

  const slots: Slot[] = [];
  const queue: Job[] = [];
  const starts = new Set<Promise<void>>();
  let closed = false;
  let lastStartFailureAt = Number.NEGATIVE_INFINITY;

  function pump(): void {
    if (closed) return;
    for (;;) {
      const idle = slots.find((slot) => slot.job === undefined);
      if (!idle || queue.length === 0) break;
      run(idle, queue.shift()!);
    }
    const retryAllowed = slots.length === 0 || Date.now() - lastStartFailureAt >= START_RETRY_DELAY_MS;
    const wanted = Math.min(queue.length - starts.size, size - slots.length - starts.size);
    for (let i = 0; retryAllowed && i < wanted; i++) {
      const start = startSlot().finally(() => {
        starts.delete(start);
        pump();
      });
      starts.add(start);
    }
  }

  async function startSlot(): Promise<void> {
    let slot: Slot;
    try {
      slot = await spawnSlot(langPath, startTimeoutMs, failSlot);
    } catch (error) {
      lastStartFailureAt = Date.now();
      // Nothing else can take the waiting images: fail them now instead of leaving them queued.
      if (slots.length === 0 && starts.size === 1) for (const job of queue.splice(0)) job.reject(asError(error));
      return;
    }
    if (closed) {
      void endSlot(slot);
      return;
    }
    slots.push(slot);
  }

  function run(slot: Slot, job: Job): void {
    slot.job = job;
    slot.timer = setTimeout(() => failSlot(slot, new Error(`OCR of one image took longer than ${jobTimeoutMs} ms`)), jobTimeoutMs);
    const image = Buffer.from(job.image.buffer, job.image.byteOffset, job.image.byteLength);
    slot.worker.recognize(image).then(
      (result) => {
        if (slot.job !== job || slot.ended) return;
        finishJob(slot);
        job.resolve({ text: result.data.text, confidence: result.data.confidence });
        pump();
      },
      (error: unknown) => {
        if (slot.job !== job || slot.ended) return;
        finishJob(slot);
        // The worker answered, so it is fine: the image itself could not be read.
        job.reject(new UnreadableContentError(`OCR could not read the image: ${describe(error)}`));
        pump();
      },
    );
  }

  function finishJob(slot: Slot): void {
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.job = undefined;
  }

  /** A worker crashed, exited or hung: fail its job, drop it, and let pump() start a new one. */
  function failSlot(slot: Slot, error: Error): void {
    if (slot.ended) return;
    const job = slot.job;
    finishJob(slot);
    void endSlot(slot);
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
    job?.reject(error);
    pump();
  }

  return {
    size,
    get workers() {
      return slots.length;
    },
    recognize(image) {
      if (closed) return Promise.reject(new Error('OCR pool is closed'));
      return new Promise<OcrResult>((resolve, reject) => {
        queue.push({ image, resolve, reject });
        pump();
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      const error = new Error('OCR pool closed');
      for (const job of queue.splice(0)) job.reject(error);
      const ending = slots.splice(0).map((slot) => {
        const job = slot.job;
        finishJob(slot);
        job?.reject(error);
        return endSlot(slot);
      });
      await Promise.all([...ending, ...starts]);
    },
  };
}

/** Stops listening to the slot's thread and terminates it. */
async function endSlot(slot: Slot): Promise<void> {
  if (slot.ended) return;
  slot.ended = true;
  clearTimeout(slot.timer);
  await slot.worker.terminate().catch(() => undefined);
  if (slot.thread) await slot.thread.terminate().catch(() => undefined);
  slot.detach();
}

/**
 * Starts one tesseract.js worker and finds its thread. Node emits the 'worker' process event on
 * the tick after a Worker is constructed, and tesseract.js constructs its thread synchronously in
 * createWorker, so the last 'worker' event before our own next tick is this worker's thread.
 */
async function spawnSlot(langPath: string, timeoutMs: number, onFailure: (slot: Slot, error: Error) => void): Promise<Slot> {
  checkLanguageData(langPath);
  // Set once the worker has started: failures after that go to the pool, before it to the start.
  const started: { slot?: Slot } = {};
  let failStart: (error: Error) => void = () => undefined;
  const startFailed = new Promise<never>((_, reject) => {
    failStart = reject;
  });

  const onThreadError = (error: unknown): void => {
    const failure = new Error(`OCR worker thread failed: ${describe(error)}`);
    if (started.slot) onFailure(started.slot, failure);
    else failStart(failure);
  };
  const onThreadExit = (code: number): void => {
    const failure = new Error(`OCR worker thread exited (code ${code})`);
    if (started.slot) onFailure(started.slot, failure);
    else failStart(failure);
  };
  let thread: ThreadWorker | undefined;
  const attach = (candidate: ThreadWorker): void => {
    thread = candidate;
    candidate.on('error', onThreadError);
    candidate.on('exit', onThreadExit);
    guardMessageListeners(candidate, onThreadError);
  };
  const detach = (): void => {
    thread?.off('error', onThreadError);
    thread?.off('exit', onThreadExit);
  };

  let lastSpawned: ThreadWorker | undefined;
  const onWorker = (candidate: ThreadWorker): void => {
    lastSpawned = candidate;
  };
  process.on('worker', onWorker);
  const creating = Tesseract.createWorker(LANGUAGE, Tesseract.OEM.LSTM_ONLY, {
    langPath,
    gzip: true,
    cacheMethod: 'none',
    // Called for every job a worker rejects; the job's own promise carries the error, so only a
    // failure while starting needs handling here.
    errorHandler: (error: unknown) => {
      if (!started.slot) failStart(new Error(`OCR worker failed to start: ${describe(error)}`));
    },
  });
  await new Promise<void>((resolve) => process.nextTick(resolve));
  process.off('worker', onWorker);
  if (lastSpawned) attach(lastSpawned);

  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`OCR worker did not start within ${timeoutMs} ms`)), timeoutMs);
  });
  let worker: Tesseract.Worker;
  try {
    worker = await Promise.race([creating, startFailed, timedOut]);
  } catch (error) {
    detach();
    await thread?.terminate().catch(() => undefined);
    throw error;
  } finally {
    clearTimeout(timer);
  }
  // tesseract.js keeps its thread as `worker.worker` (not in its types): prefer it if it differs.
  const own = (worker as unknown as { worker?: unknown }).worker;
  if (own instanceof ThreadWorker && own !== thread) {
    detach();
    attach(own);
  }
  started.slot = { worker, thread, job: undefined, timer: undefined, ended: false, detach };
  return started.slot;
}

/**
 * tesseract.js settles a job from its thread's 'message' listener and throws there when a message
 * names a job it already settled. That happens when Tesseract fails to initialise (bad language
 * data): its worker script sends a rejection and then a resolution for the same job, and the
 * TypeError thrown from the listener is an uncaught exception. Each listener tesseract.js attached
 * is replaced by one that reports such a throw as a failure of this worker instead.
 */
function guardMessageListeners(thread: ThreadWorker, onError: (error: unknown) => void): void {
  for (const listener of thread.listeners('message')) {
    const original = listener as (message: unknown) => void;
    thread.off('message', original);
    thread.on('message', (message: unknown) => {
      try {
        original.call(thread, message);
      } catch (error) {
        onError(error);
      }
    });
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(describe(error));
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/^Error: /, '');
}
