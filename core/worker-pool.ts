/**
 * A pool of worker threads for CPU-heavy work that must not run on the API's event loop
 * (DEVELOPERS.md). One module for every kind of such work: a thread entry serves a map of named
 * task handlers (`serveTasks`), and the main side runs them by name (`WorkerPool.run`).
 *
 * - **Fair by key.** Each task carries a key (the tenant): queued tasks are taken round-robin
 *   across keys, so one tenant's thousand chunks wait behind each other, not in front of another
 *   tenant's ten.
 * - **Abandonable.** A task whose signal aborts (its request's deadline answered, or its client
 *   left) is taken out of the queue at once; one already running finishes on its thread (CPU work
 *   cannot be interrupted) and its result is dropped. Tasks are meant to be small (one chunk).
 * - **Self-healing.** A thread that dies fails only its own tasks and is replaced on next use.
 * - **One task per thread, or a few.** `tasksPerThread` above 1 sends a thread further tasks while
 *   one runs; the thread interleaves them at their awaits (the model thread: a search's query
 *   embedding runs between two steps of a speech window instead of after the whole window).
 */
import { readlinkSync } from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';

/** Task name -> handler; a handler runs on a pool thread, its input and output cross by structured clone. */
export type TaskHandlers = Record<string, (input: never) => unknown>;

export interface TaskOptions {
  /** Fairness key (a tenant id): queued tasks are taken round-robin across keys. */
  key: string;
  signal?: AbortSignal | undefined;
  /** Buffers of the input moved to the thread instead of copied (unusable here afterwards). */
  transfer?: ArrayBuffer[] | undefined;
}

const TRANSFER = Symbol('transfer');

/**
 * Whether a message can move these bytes instead of copying them: they are the whole of their
 * buffer, and it is not shared memory (which cannot be moved, and needs not be: the other thread
 * reads it where it is, api/middleware/shared-body.ts).
 */
export function ownsItsBuffer(bytes: Uint8Array): boolean {
  return !(bytes.buffer instanceof SharedArrayBuffer) && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
}

/** A message's transfer list for these bytes: their buffer when they own it, nothing otherwise. */
export function movableBuffers(bytes: Uint8Array): ArrayBuffer[] {
  return ownsItsBuffer(bytes) ? [bytes.buffer as ArrayBuffer] : [];
}

/**
 * A handler's output whose `buffers` move to the caller's thread instead of being copied (a
 * message's copy of megabytes is one stretch of the receiving event loop). Buffers that share
 * their memory with others (Node's pool of small Buffers) are copied as usual.
 */
export function transferring<T extends object>(output: T, buffers: Uint8Array[]): T {
  Object.defineProperty(output, TRANSFER, { value: buffers.flatMap(movableBuffers), enumerable: false });
  return output;
}

/** Hears how each task ended and how long it took from `run` (queueing included), for metrics. */
export type PoolObserver = (task: string, seconds: number, outcome: 'ok' | 'failed' | 'abandoned') => void;

interface Job {
  id: number;
  kind: string;
  /** performance.now() when `run` was called. */
  queuedAt: number;
  input: unknown;
  transfer: ArrayBuffer[];
  key: string;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  done: boolean;
  resolve: (output: unknown) => void;
  reject: (error: unknown) => void;
}

interface Thread {
  worker: Worker;
  /** The tasks sent to it and not yet answered, by id. */
  jobs: Map<number, Job>;
  /** Called when its last task has answered (a closing pool waits for that). */
  onIdle?: () => void;
}

/**
 * How long a closing pool waits for a thread's running tasks to answer before ending the thread
 * anyway. A task runs native code that cannot be interrupted (onnxruntime, compromise); ending a
 * thread under a running onnxruntime call aborted the whole process (`terminate called after
 * throwing an instance of 'Napi::Error'`). The longest task is a model call: a batch of at most
 * 1,024 padded tokens or one speech window, seconds at most on a loaded machine.
 */
const CLOSE_DRAIN_MS = 5000;

type Reply = { id: number; ok: true; output: unknown } | { id: number; ok: false; message: string };

export class WorkerPoolClosedError extends Error {
  constructor() {
    super('the worker pool is closed');
    this.name = 'WorkerPoolClosedError';
  }
}

export class WorkerPool<Handlers extends TaskHandlers> {
  private readonly threads: Thread[] = [];
  /** Queued jobs per key, and the keys in round-robin order. */
  private readonly queues = new Map<string, Job[]>();
  private readonly ring: string[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly script: URL,
    /** Threads at most (started on first use). */
    readonly size: number,
    /** Tasks a thread holds at once (default 1); only for handlers that await, so they can interleave. */
    readonly tasksPerThread = 1,
    /**
     * The threads' scheduling niceness (0: as the process; higher: yield the CPU sooner). On 2
     * cores a device create's extraction and embedding threads took the cores from the event loop
     * and another tenant's search waited for CPU 6-8x its idle latency; above 0 the event loop gets
     * the CPU first (Linux: per thread, see `serveTasks`; elsewhere it is left as is).
     */
    readonly niceness = 0,
    private readonly observe?: PoolObserver,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`worker pool size must be a positive integer, not ${size}`);
    if (!Number.isInteger(tasksPerThread) || tasksPerThread < 1) {
      throw new Error(`tasks per thread must be a positive integer, not ${tasksPerThread}`);
    }
  }

  /** Runs a task on a pool thread; rejects with the signal's reason when it aborts first. */
  run<Kind extends keyof Handlers & string>(
    kind: Kind,
    input: Parameters<Handlers[Kind]>[0],
    options: TaskOptions,
  ): Promise<Awaited<ReturnType<Handlers[Kind]>>> {
    if (this.closed) return Promise.reject(new WorkerPoolClosedError());
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    return new Promise((resolve, reject) => {
      const job: Job = {
        id: this.nextId++,
        kind,
        queuedAt: performance.now(),
        input,
        transfer: options.transfer ?? [],
        key: options.key,
        signal: options.signal,
        onAbort: undefined,
        done: false,
        // The thread answers what the handler of `kind` returned: the one place the type is taken on trust.
        resolve: resolve as (output: unknown) => void,
        reject,
      };
      if (job.signal) {
        job.onAbort = () => this.abandon(job);
        job.signal.addEventListener('abort', job.onAbort, { once: true });
      }
      let queue = this.queues.get(job.key);
      if (!queue) {
        this.queues.set(job.key, (queue = []));
        this.ring.push(job.key);
      }
      queue.push(job);
      this.pump();
    });
  }

  /** Tasks waiting for a thread (of one key, or all). */
  queued(key?: string): number {
    if (key !== undefined) return this.queues.get(key)?.length ?? 0;
    let total = 0;
    for (const queue of this.queues.values()) total += queue.length;
    return total;
  }

  /**
   * Starts every thread now instead of on first use: a thread loads its script first (hundreds of
   * milliseconds for the CPU tasks' extractor), which a pool on a request's path should not make
   * the first request wait for. A thread lost later is started again on use.
   */
  start(): void {
    if (this.closed) throw new WorkerPoolClosedError();
    while (this.spawn());
  }

  /** Threads running now. */
  get started(): number {
    return this.threads.length;
  }

  /**
   * Fails what is queued or running and ends every thread, each once its running tasks have
   * answered (their callers are not waited for: they are told the pool closed), or after
   * CLOSE_DRAIN_MS. The pool cannot be reused.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const queue of this.queues.values()) for (const job of queue) this.finish(job, { ok: false, error: new WorkerPoolClosedError() });
    this.queues.clear();
    this.ring.length = 0;
    const threads = this.threads.splice(0);
    for (const thread of threads)
      for (const job of thread.jobs.values()) this.finish(job, { ok: false, error: new WorkerPoolClosedError() });
    await Promise.all(
      threads.map(async (thread) => {
        await this.idle(thread, CLOSE_DRAIN_MS);
        await thread.worker.terminate();
      }),
    );
  }

  /** Resolves once the thread has answered every task sent to it, it is gone, or `timeoutMs` passed. */
  private idle(thread: Thread, timeoutMs: number): Promise<void> {
    if (thread.jobs.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        thread.worker.off('exit', done);
        thread.onIdle = undefined;
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      thread.worker.once('exit', done);
      thread.onIdle = done;
    });
  }

  private abandon(job: Job): void {
    const queue = this.queues.get(job.key);
    const at = queue?.indexOf(job) ?? -1;
    if (queue && at >= 0) {
      queue.splice(at, 1);
      if (queue.length === 0) this.dropKey(job.key);
    }
    // A running job keeps its thread until the thread answers; only the caller stops waiting.
    this.finish(job, { ok: false, error: job.signal!.reason });
  }

  /** Settles a job once: later answers (a thread finishing an abandoned job) are dropped. */
  private finish(job: Job, outcome: { ok: true; output: unknown } | { ok: false; error: unknown }): void {
    if (job.done) return;
    job.done = true;
    if (job.signal && job.onAbort) job.signal.removeEventListener('abort', job.onAbort);
    const outcomeName = outcome.ok ? 'ok' : job.signal?.aborted && outcome.error === job.signal.reason ? 'abandoned' : 'failed';
    this.observe?.(job.kind, (performance.now() - job.queuedAt) / 1000, outcomeName);
    if (outcome.ok) job.resolve(outcome.output);
    else job.reject(outcome.error);
  }

  private dropKey(key: string): void {
    this.queues.delete(key);
    const at = this.ring.indexOf(key);
    if (at >= 0) this.ring.splice(at, 1);
  }

  /** The next job, round-robin across keys. */
  private take(): Job | undefined {
    const key = this.ring.shift();
    if (key === undefined) return undefined;
    const queue = this.queues.get(key)!;
    const job = queue.shift()!;
    if (queue.length === 0) this.queues.delete(key);
    else this.ring.push(key);
    return job;
  }

  private pump(): void {
    while (!this.closed && this.ring.length > 0) {
      // The least busy thread with room, else a new one.
      const withRoom = this.threads.filter((candidate) => candidate.jobs.size < this.tasksPerThread);
      const idlest = withRoom.sort((a, b) => a.jobs.size - b.jobs.size)[0];
      const thread = idlest && idlest.jobs.size === 0 ? idlest : (this.spawn() ?? idlest);
      if (!thread) return;
      const job = this.take()!;
      thread.jobs.set(job.id, job);
      thread.worker.postMessage({ id: job.id, kind: job.kind, input: job.input }, job.transfer);
    }
  }

  private spawn(): Thread | undefined {
    if (this.threads.length >= this.size) return undefined;
    const thread: Thread = { worker: new Worker(this.script, { workerData: { niceness: this.niceness } }), jobs: new Map() };
    // Idle threads do not keep the process alive; a running job is awaited by someone who does.
    thread.worker.unref();
    thread.worker.on('message', (reply: Reply) => {
      const job = thread.jobs.get(reply.id);
      thread.jobs.delete(reply.id);
      if (job) this.finish(job, reply.ok ? { ok: true, output: reply.output } : { ok: false, error: new Error(reply.message) });
      if (thread.jobs.size === 0) thread.onIdle?.();
      this.pump();
    });
    const lost = (why: string): void => {
      const at = this.threads.indexOf(thread);
      if (at < 0) return;
      this.threads.splice(at, 1);
      for (const job of thread.jobs.values())
        this.finish(job, { ok: false, error: new Error(`a worker thread ${why} while running ${job.kind}`) });
      thread.jobs.clear();
      this.pump();
    };
    thread.worker.on('error', (error) => lost(`failed (${error.message})`));
    thread.worker.on('exit', (code) => lost(`exited with code ${code}`));
    this.threads.push(thread);
    return thread;
  }
}

/** The thread side: answers each task with its handler's result (or its error's message). */
export function serveTasks(handlers: TaskHandlers): void {
  if (isMainThread || !parentPort) throw new Error('serveTasks runs only inside a worker thread');
  const port = parentPort;
  const niceness = (workerData as { niceness?: number } | null)?.niceness ?? 0;
  if (niceness > 0) lowerThisThreadsPriority(niceness);
  port.on('message', async (task: { id: number; kind: string; input: never }) => {
    const handler = handlers[task.kind];
    let reply: Reply;
    let transfer: ArrayBuffer[] = [];
    try {
      if (!handler) throw new Error(`no handler for task ${task.kind}`);
      const output = await handler(task.input);
      if (typeof output === 'object' && output !== null && TRANSFER in output) transfer = output[TRANSFER] as ArrayBuffer[];
      reply = { id: task.id, ok: true, output };
    } catch (error) {
      reply = { id: task.id, ok: false, message: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(reply, transfer);
  });
}

/**
 * Linux schedules threads one by one, and setpriority(2) on a thread id sets that thread's nice
 * value alone (lowering it needs no privilege). /proc/thread-self names this thread's id. Where
 * that does not exist (another OS), the thread keeps the process's priority.
 */
function lowerThisThreadsPriority(niceness: number): void {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    if (Number.isInteger(threadId) && threadId > 0) os.setPriority(threadId, Math.min(19, niceness));
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}
