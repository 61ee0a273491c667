/**
 * Speech to text with Whisper (Xenova/whisper-tiny.en through @huggingface/transformers, int8
 * weights from MODELS_DIR). Audio is first turned into mono float samples at 16 kHz: WAV in
 * process (wavefile reads the container; conversion and resampling are done here, because
 * wavefile's own converters take minutes on a ten-minute file), everything else through ffmpeg.
 *
 * The audio is transcribed in 30 s windows that overlap by 5 s on each side, exactly the windows
 * of the transformers.js ASR pipeline with chunk_length_s 30 and stride_length_s 5, and the
 * window outputs are merged by the Whisper tokenizer's own overlap resolution. The windows are run
 * here one by one rather than through the pipeline, so that progress counts windows, memory holds
 * one window's features at a time, cancellation is checked between windows, and windows that are
 * digital silence are skipped (Whisper tends to invent words for them).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  AutoProcessor,
  AutoTokenizer,
  env,
  LogitsProcessor,
  LogitsProcessorList,
  Tensor,
  WhisperForConditionalGeneration,
  WhisperTokenizer,
  type Processor,
} from '@huggingface/transformers';
import wavefile from 'wavefile';
import { onnxSessionOptions } from '../core/onnx-session.js';
import { UnreadableContentError, type ExtractedSection, type Extraction, type ProgressReporter } from './types.js';

export const SAMPLE_RATE = 16_000;
const WINDOW_S = 30;
/** Overlap on each side of a window, as the pipeline's stride_length_s. */
const STRIDE_S = 5;
/** Windows quieter than this (RMS, about -60 dBFS) are not sent to the model. */
const SILENCE_RMS = 0.001;

/** Where the Whisper model comes from. */
export interface SpeechModelSource {
  /** Folder holding <modelId>/ (config, tokenizer, onnx/*_quantized.onnx). */
  modelsDir?: string | undefined;
  /** Download from the Hugging Face hub when the model is not local (forced on without modelsDir, as for the embedder). */
  allowRemoteModels: boolean;
  /** Default Xenova/whisper-tiny.en. */
  modelId?: string;
  /** onnxruntime intra-op threads for the encoder and decoder; default: onnxruntime's own (one per core), never spinning. */
  threads?: number;
}

/** One window's token ids, with the window's length and overlaps in seconds (the tokenizer's `stride`). */
export interface WindowTokens {
  tokens: bigint[];
  stride: number[];
}

export interface Segment {
  text: string;
  start: number;
  end: number;
}

/**
 * The model side of transcription: what runs onnxruntime and the Whisper tokenizer. A service
 * process runs it on its model thread (models/model-thread-client.ts), the one thread of the
 * process that runs onnxruntime; `localSpeechModel` runs it on the caller's thread.
 */
export interface SpeechModel {
  readonly modelId: string;
  load(): Promise<void>;
  /** Token ids of one window of at most 30 s of 16 kHz samples. */
  transcribeWindow(audio: Float32Array, signal?: AbortSignal): Promise<bigint[]>;
  /** The windows' token streams joined (overlaps resolved by the tokenizer) into timed segments. */
  mergeWindows(outputs: WindowTokens[], duration: number): Promise<Segment[]>;
  /** Releases the ONNX sessions (after the window in progress); a later call loads the model again. */
  close(): Promise<void>;
}

export interface TranscriberOptions extends SpeechModelSource {
  /** The model to run; default: `localSpeechModel` of this source, on the caller's thread. */
  model?: SpeechModel;
  /** Longer audio is refused as unreadable content; default 3 hours (about 690 MB of samples). */
  maxDurationS?: number;
  /** Transcript sections are cut at segment boundaries below this length; default 1000 characters. */
  sectionMaxChars?: number;
  /** Default 'ffmpeg' from PATH. */
  ffmpegPath?: string;
  /** Longest ffmpeg may take to decode one file; default 5 minutes. */
  decodeTimeoutMs?: number;
}

export interface TranscribeOptions {
  /** Checked between windows (and while ffmpeg runs); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface Transcriber {
  readonly modelId: string;
  /** Loads the model now (it is otherwise loaded by the first transcription that has sound in it). */
  load(): Promise<void>;
  /** units = number of 30 s windows; progress is reported after each window. */
  transcribe(bytes: Uint8Array, mediaType: string, onProgress?: ProgressReporter, options?: TranscribeOptions): Promise<Extraction>;
  /** Waits for the window in progress, then releases the ONNX sessions; a later transcription loads the model again. */
  close(): Promise<void>;
}

interface Model {
  processor: Processor;
  tokenizer: WhisperTokenizer;
  model: WhisperForConditionalGeneration;
  timePrecision: number;
  /** generation_config.suppress_tokens, which transformers.js 3.8 does not apply by itself. */
  suppressTokens: number[];
}

/**
 * Sets the logits of the model's suppress_tokens to -Infinity, as Whisper's reference decoder does.
 * transformers.js 3.8 leaves this step out (it is commented out in its generate), and without it
 * whisper-tiny.en can answer a window of clear speech with <|nocaptions|> and nothing else: it did
 * so for both windows of a 48 s espeak-ng paragraph, which the plain pipeline returns as "".
 */
class SuppressTokens extends LogitsProcessor {
  constructor(private readonly tokens: number[]) {
    super();
  }

  override _call(inputIds: bigint[][], logits: Tensor): Tensor {
    const vocabulary = logits.dims.at(-1) ?? 0;
    const data = logits.data as Float32Array;
    for (let row = 0; row < inputIds.length; row++) {
      for (const token of this.tokens) if (token < vocabulary) data[row * vocabulary + token] = -Infinity;
    }
    return logits;
  }
}

export function createTranscriber(options: TranscriberOptions): Transcriber {
  const model = options.model ?? localSpeechModel(options);
  const maxDurationS = options.maxDurationS ?? 3 * 3600;
  const sectionMaxChars = options.sectionMaxChars ?? 1000;
  // One window at a time per process: each model call already uses every core.
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(task: () => Promise<T>): Promise<T> => {
    const result = queue.then(task, task);
    queue = result.catch(() => undefined);
    return result;
  };

  return {
    modelId: model.modelId,
    load: () => model.load(),
    async transcribe(bytes, mediaType, onProgress, { signal } = {}) {
      const isWav = isRiffWave(bytes);
      const samples = await decodeAudio(bytes, {
        maxDurationS,
        ffmpegPath: options.ffmpegPath,
        timeoutMs: options.decodeTimeoutMs,
        signal,
      });
      const duration = samples.length / SAMPLE_RATE;
      const windows = planWindows(samples.length);
      const outputs: WindowTokens[] = [];
      for (const [index, window] of windows.entries()) {
        signal?.throwIfAborted();
        const audio = samples.subarray(window.start, window.end);
        let tokens: bigint[] = [];
        if (rms(audio) >= SILENCE_RMS) tokens = await exclusive(() => model.transcribeWindow(audio, signal));
        outputs.push({
          tokens,
          stride: [audio.length / SAMPLE_RATE, window.strideLeft / SAMPLE_RATE, window.strideRight / SAMPLE_RATE],
        });
        await onProgress?.(index + 1, windows.length);
      }

      const segments = outputs.some((output) => output.tokens.length > 0) ? await model.mergeWindows(outputs, duration) : [];
      const sections = groupSegments(segments, sectionMaxChars);
      if (sections.length === 0) throw new UnreadableContentError('no speech found in the audio');
      return { mediaType: isWav ? 'audio/wav' : mediaType, sections, units: windows.length };
    },
    async close() {
      await queue; // let a window that is running finish before its sessions go
      await model.close();
    },
  };
}

/** The Whisper model on the caller's thread, loaded on first use (a model thread's tasks run this). */
export function localSpeechModel(source: SpeechModelSource): SpeechModel {
  const modelId = source.modelId ?? 'Xenova/whisper-tiny.en';
  let loading: Promise<Model> | null = null;
  let running: Promise<unknown> = Promise.resolve();
  const model = (): Promise<Model> => {
    loading ??= loadModel(modelId, source).catch((error: unknown) => {
      loading = null;
      throw error;
    });
    return loading;
  };
  return {
    modelId,
    async load() {
      await model();
    },
    async transcribeWindow(audio, signal) {
      const loaded = await model();
      signal?.throwIfAborted();
      const window = transcribeWindow(loaded, audio);
      running = window.catch(() => undefined);
      return window;
    },
    async mergeWindows(outputs, duration) {
      return mergeWindows(await model(), outputs, duration);
    },
    async close() {
      const current = loading;
      loading = null;
      if (!current) return;
      const loaded = await current.catch(() => null);
      await running; // a window that is running finishes before its sessions go
      await loaded?.model.dispose();
    },
  };
}

async function loadModel(modelId: string, options: SpeechModelSource): Promise<Model> {
  if (options.modelsDir) {
    env.localModelPath = options.modelsDir;
    env.allowLocalModels = true;
    const encoder = path.join(options.modelsDir, modelId, 'onnx', 'encoder_model_quantized.onnx');
    if (!options.allowRemoteModels && !existsSync(encoder)) {
      throw new Error(`speech model ${modelId} not found: ${encoder} is missing and remote models are not allowed`);
    }
  }
  env.allowRemoteModels = options.allowRemoteModels || !options.modelsDir;
  const session_options = onnxSessionOptions(options.threads);
  const [processor, tokenizer, model] = await Promise.all([
    AutoProcessor.from_pretrained(modelId),
    AutoTokenizer.from_pretrained(modelId),
    // 'q8' selects onnx/encoder_model_quantized.onnx and onnx/decoder_model_merged_quantized.onnx.
    WhisperForConditionalGeneration.from_pretrained(modelId, { dtype: 'q8', session_options }),
  ]);
  if (!(tokenizer instanceof WhisperTokenizer)) throw new Error(`${modelId} does not have a Whisper tokenizer`);
  // Seconds per timestamp token: 30 s of audio over the encoder's 1500 positions (0.02).
  const chunkLength = numberOr(processor.feature_extractor?.config?.chunk_length, WINDOW_S);
  const positions = numberOr((model.config as unknown as Record<string, unknown>).max_source_positions, 1500);
  const suppress = model.generation_config?.suppress_tokens;
  const suppressTokens = Array.isArray(suppress) ? suppress.filter((token): token is number => typeof token === 'number') : [];
  return { processor, tokenizer, model: model as WhisperForConditionalGeneration, timePrecision: chunkLength / positions, suppressTokens };
}

async function transcribeWindow({ processor, model, suppressTokens }: Model, audio: Float32Array): Promise<bigint[]> {
  const features: unknown = await processor(audio);
  const inputFeatures = (features as { input_features?: unknown }).input_features;
  if (!(inputFeatures instanceof Tensor)) throw new Error('the Whisper processor returned no input features');
  try {
    // A new list per call: Whisper's generate appends its timestamp processor to the list it is given.
    const logitsProcessor = new LogitsProcessorList();
    logitsProcessor.push(new SuppressTokens(suppressTokens));
    // The published types demand a whole generation_config; generate merges these keys over the model's own.
    const output = await model.generate({
      inputs: inputFeatures,
      return_timestamps: true,
      logits_processor: logitsProcessor,
    } as Parameters<typeof model.generate>[0]);
    if (!(output instanceof Tensor)) throw new Error('Whisper generate returned no token sequence');
    const rows = output.tolist() as bigint[][];
    output.dispose();
    return rows[0] ?? [];
  } finally {
    inputFeatures.dispose();
  }
}

/** Joins the windows' token streams (overlaps resolved by the tokenizer) into timed segments. */
function mergeWindows({ tokenizer, timePrecision }: Model, outputs: WindowTokens[], duration: number): Segment[] {
  const [, extra] = tokenizer._decode_asr(outputs, {
    time_precision: timePrecision,
    return_timestamps: true,
    force_full_sequences: false,
  });
  const chunks = typeof extra === 'object' && extra !== null ? (extra.chunks ?? []) : [];
  const segments: Segment[] = [];
  for (const [index, chunk] of chunks.entries()) {
    const text = cleanTranscript(chunk.text);
    if (!text) continue;
    const start = clamp(chunk.timestamp[0] ?? 0, 0, duration);
    const nextStart = chunks[index + 1]?.timestamp[0];
    const end = clamp(chunk.timestamp[1] ?? nextStart ?? duration, start, duration);
    segments.push({ text, start, end });
  }
  return segments;
}

/** Removes Whisper's non-speech annotations ([BLANK_AUDIO], (music), ♪ …) and extra spaces. */
export function cleanTranscript(text: string): string {
  return text
    .replace(/\[[^\]]{0,60}\]|\([^)]{0,60}\)|[♪♫]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function groupSegments(segments: Segment[], maxChars: number): ExtractedSection[] {
  const sections: ExtractedSection[] = [];
  let current: Segment | null = null;
  for (const segment of segments) {
    if (current && current.text.length + 1 + segment.text.length <= maxChars) {
      current.text += ` ${segment.text}`;
      current.end = segment.end;
      continue;
    }
    if (current) sections.push(toSection(current));
    current = { ...segment };
  }
  if (current) sections.push(toSection(current));
  return sections;
}

function toSection(segment: Segment): ExtractedSection {
  return { text: segment.text, start_s: round2(segment.start), end_s: round2(segment.end), method: 'asr' };
}

/** The pipeline's windows: 30 s long, starting every 20 s; the first has no left and the last no right overlap. */
export function planWindows(length: number): { start: number; end: number; strideLeft: number; strideRight: number }[] {
  const window = WINDOW_S * SAMPLE_RATE;
  const stride = STRIDE_S * SAMPLE_RATE;
  const windows: { start: number; end: number; strideLeft: number; strideRight: number }[] = [];
  for (let start = 0; ; start += window - 2 * stride) {
    const last = start + window >= length;
    windows.push({ start, end: Math.min(start + window, length), strideLeft: start === 0 ? 0 : stride, strideRight: last ? 0 : stride });
    if (last) return windows;
  }
}

// ---------------------------------------------------------------------------------------------
// Decoding to mono float samples at 16 kHz

export interface DecodeOptions {
  maxDurationS?: number;
  ffmpegPath?: string | undefined;
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** Any audio file to mono Float32 samples at 16 kHz. Undecodable, empty or too long audio is unreadable content. */
export async function decodeAudio(bytes: Uint8Array, options: DecodeOptions = {}): Promise<Float32Array> {
  const maxDurationS = options.maxDurationS ?? 3 * 3600;
  if (bytes.length === 0) throw new UnreadableContentError('the audio file is empty');
  const wav = isRiffWave(bytes) ? decodeWav(bytes) : undefined;
  let samples: Float32Array;
  if (wav) {
    if (wav.samples.length / wav.sampleRate > maxDurationS) throw new UnreadableContentError(`the audio is longer than ${maxDurationS} s`);
    samples = resample(wav.samples, wav.sampleRate, SAMPLE_RATE);
  } else {
    samples = await decodeWithFfmpeg(bytes, maxDurationS, options);
  }
  if (samples.length === 0) throw new UnreadableContentError('the audio has no samples');
  return samples;
}

function isRiffWave(bytes: Uint8Array): boolean {
  const tag = (at: number): string => String.fromCharCode(...bytes.subarray(at, at + 4));
  return bytes.length >= 12 && ['RIFF', 'RIFX', 'RF64'].includes(tag(0)) && tag(8) === 'WAVE';
}

interface WavFormat {
  audioFormat: number;
  numChannels: number;
  sampleRate: number;
  bitsPerSample: number;
  subformat?: number[];
}

/**
 * Integer PCM (8 to 32 bits) and float (32, 64 bits) WAV, channels averaged. Returns undefined for
 * what it does not read (µ-law, ADPCM, a broken header), which then goes to ffmpeg. A data chunk
 * cut short (a truncated upload) gives the samples that are there.
 */
export function decodeWav(bytes: Uint8Array): { samples: Float32Array; sampleRate: number } | undefined {
  let wav: InstanceType<typeof wavefile.WaveFile>;
  try {
    wav = new wavefile.WaveFile(bytes);
  } catch {
    return undefined;
  }
  // wavefile types its chunks as plain objects.
  const fmt = wav.fmt as unknown as WavFormat;
  const data = (wav.data as unknown as { samples?: unknown }).samples;
  if (!(data instanceof Uint8Array)) return undefined;
  const format = fmt.audioFormat === 0xfffe ? fmt.subformat?.[0] : fmt.audioFormat;
  const bits = fmt.bitsPerSample;
  const channels = fmt.numChannels;
  const float = format === 3;
  if ((format !== 1 && !float) || !(channels >= 1) || !(fmt.sampleRate > 0)) return undefined;
  if (float ? bits !== 32 && bits !== 64 : ![8, 16, 24, 32].includes(bits)) return undefined;

  const bytesPerSample = bits / 8;
  const frameSize = bytesPerSample * channels;
  const frames = Math.floor(data.length / frameSize);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const little = wav.container !== 'RIFX';
  const read = ((): ((at: number) => number) => {
    if (float) return bits === 32 ? (at) => view.getFloat32(at, little) : (at) => view.getFloat64(at, little);
    switch (bits) {
      case 8:
        return (at) => (view.getUint8(at) - 128) / 128;
      case 16:
        return (at) => view.getInt16(at, little) / 32768;
      case 24:
        return (at) => {
          const low = little ? view.getUint16(at, true) : view.getUint16(at + 1, false);
          const high = little ? view.getInt8(at + 2) : view.getInt8(at);
          return (high * 65536 + low) / 8388608;
        };
      default:
        return (at) => view.getInt32(at, little) / 2147483648;
    }
  })();

  const samples = new Float32Array(frames);
  for (let frame = 0, at = 0; frame < frames; frame++) {
    let sum = 0;
    for (let channel = 0; channel < channels; channel++, at += bytesPerSample) sum += read(at);
    samples[frame] = sum / channels;
  }
  return { samples, sampleRate: fmt.sampleRate };
}

/**
 * Band-limited resampling: a Blackman-windowed sinc (10 zero crossings) with its cut-off just below
 * the lower of the two Nyquist frequencies, read from a table. About 0.1 s per minute of 44.1 kHz audio (2 cores, Node 20).
 */
export function resample(input: Float32Array, fromRate: number, toRate: number): Float32Array {
  if (fromRate === toRate) return input;
  const step = fromRate / toRate;
  const cutoff = 0.5 * Math.min(1, 1 / step) * 0.95; // cycles per input sample
  const zeroCrossings = 10;
  const half = zeroCrossings / (2 * cutoff); // kernel half-width, in input samples
  const resolution = 256; // table entries per input sample
  // The kernel over [-half, half]: entry i is at offset i / resolution - half.
  const table = new Float32Array(Math.ceil(2 * half * resolution) + 2);
  for (let i = 0; i < table.length; i++) {
    const x = Math.abs(i / resolution - half);
    if (x > half) continue;
    const arg = Math.PI * 2 * cutoff * x;
    const sinc = arg === 0 ? 1 : Math.sin(arg) / arg;
    const r = x / half;
    table[i] = sinc * (0.42 + 0.5 * Math.cos(Math.PI * r) + 0.08 * Math.cos(2 * Math.PI * r));
  }
  const outLength = Math.floor((input.length * toRate) / fromRate);
  const output = new Float32Array(outLength);
  const last = input.length - 1;
  for (let j = 0; j < outLength; j++) {
    const center = j * step;
    const first = Math.max(0, Math.ceil(center - half));
    const end = Math.min(last, Math.floor(center + half));
    // Consecutive input samples are `resolution` table entries apart.
    let index = Math.round((first - center + half) * resolution);
    let sum = 0;
    let weights = 0;
    for (let k = first; k <= end; k++, index += resolution) {
      const weight = table[index] ?? 0;
      sum += (input[k] ?? 0) * weight;
      weights += weight;
    }
    output[j] = weights > 0 ? sum / weights : 0;
  }
  return output;
}

/** MP4/QuickTime (m4a, mp4, mov) often keep their index after the samples: ffmpeg must seek, so not a pipe. */
function needsSeekableInput(bytes: Uint8Array): boolean {
  const atom = String.fromCharCode(...bytes.subarray(4, 8));
  return ['ftyp', 'moov', 'mdat', 'free', 'skip', 'wide'].includes(atom);
}

async function decodeWithFfmpeg(bytes: Uint8Array, maxDurationS: number, options: DecodeOptions): Promise<Float32Array> {
  options.signal?.throwIfAborted();
  const tempDir = needsSeekableInput(bytes) ? await mkdtemp(path.join(os.tmpdir(), 'engram-audio-')) : undefined;
  try {
    const input = tempDir ? path.join(tempDir, 'input') : 'pipe:0';
    if (tempDir) await writeFile(input, bytes);
    return await runFfmpeg(bytes, input, maxDurationS, options);
  } finally {
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
  }
}

function runFfmpeg(bytes: Uint8Array, input: string, maxDurationS: number, options: DecodeOptions): Promise<Float32Array> {
  const maxBytes = Math.ceil(maxDurationS * SAMPLE_RATE) * 4;
  const timeoutMs = options.timeoutMs ?? 300_000;
  // f32le is the host's order on every platform Node ships for (x64, arm64).
  const args = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-i', input];
  args.push('-map', '0:a:0', '-vn', '-sn', '-dn', '-f', 'f32le', '-ac', '1', '-ar', String(SAMPLE_RATE), 'pipe:1');
  return new Promise<Float32Array>((resolve, reject) => {
    const child = spawn(options.ffmpegPath ?? 'ffmpeg', args, { stdio: [input === 'pipe:0' ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let stopped: 'too-long' | 'timeout' | 'aborted' | null = null;
    const stop = (why: typeof stopped): void => {
      stopped ??= why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    const onAbort = (): void => stop('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout?.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) stop('too-long');
      else chunks.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-2000);
    });
    if (child.stdin) {
      // ffmpeg may exit before reading everything (garbage input): the exit code tells, not EPIPE.
      child.stdin.on('error', () => undefined);
      child.stdin.end(bytes);
    }
    child.on('error', (error) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      reject(new Error(`could not run ffmpeg: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      const tail = stderr.trim().split('\n').slice(-3).join(' | ');
      if (stopped === 'too-long') return reject(new UnreadableContentError(`the audio is longer than ${maxDurationS} s`));
      if (stopped === 'timeout') return reject(new Error(`ffmpeg did not decode the audio within ${timeoutMs} ms`));
      if (stopped === 'aborted') return reject(options.signal?.reason ?? new Error('aborted'));
      if (signal) return reject(new Error(`ffmpeg was killed by ${signal}`));
      if (code !== 0) return reject(new UnreadableContentError(`could not decode the audio (ffmpeg exit code ${code}): ${tail}`));
      const samples = new Float32Array(Math.floor(size / 4));
      const target = new Uint8Array(samples.buffer);
      let offset = 0;
      for (const chunk of chunks) {
        const take = Math.min(chunk.length, target.length - offset);
        target.set(chunk.subarray(0, take), offset);
        offset += take;
      }
      resolve(samples);
    });
  });
}

function rms(samples: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
  return samples.length > 0 ? Math.sqrt(sum / samples.length) : 0;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
