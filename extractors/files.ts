/**
 * One entry point for every uploaded file: sniff what the bytes really are, then hand them to
 * the extractor for that kind. Heavy resources (the OCR worker pool, the Whisper model) are
 * created on first use and shared by every activity in the worker process.
 */
import { extractImage } from './image.js';
import { extractPackage, refuseEncryptedOffice } from './office/index.js';
import { createOcrPool, type OcrPool } from './ocr.js';
import { extractPdf } from './pdf.js';
import { sniffMediaType } from './sniff.js';
import { extractTextFile } from './text-formats.js';
import { createTranscriber, type SpeechModel, type Transcriber } from './audio.js';
import { UnreadableContentError, type Extraction, type ProgressReporter } from './types.js';

export interface FileExtractionOptions {
  modelsDir: string | undefined;
  allowRemoteModels: boolean;
  ocrWorkers?: number;
  /** Where Whisper runs (a service process: its model thread); default on the caller's thread. */
  speechModel?: SpeechModel;
}

export interface FileExtractors {
  /** `signal` stops a long transcription between windows (e.g. the memory was deleted). */
  extract(
    bytes: Uint8Array,
    declaredType: string | undefined,
    filename: string | undefined,
    onProgress?: ProgressReporter,
    signal?: AbortSignal,
  ): Promise<Extraction>;
  close(): Promise<void>;
}

export function createFileExtractors(options: FileExtractionOptions): FileExtractors {
  let pool: OcrPool | null = null;
  let transcriber: Transcriber | null = null;
  const ocr = (): OcrPool => (pool ??= createOcrPool({ size: options.ocrWorkers }));

  return {
    async extract(bytes, declaredType, filename, onProgress, signal) {
      const sniffed = await sniffMediaType(bytes, declaredType, filename);
      switch (sniffed.kind) {
        case 'pdf':
          return extractPdf(bytes, { ocrPage: async (png) => (await ocr().recognize(png)).text, onProgress });
        case 'image':
          return extractImage(bytes, sniffed.mediaType, ocr(), onProgress);
        case 'audio':
          transcriber ??= createTranscriber({
            modelsDir: options.modelsDir,
            allowRemoteModels: options.allowRemoteModels,
            ...(options.speechModel ? { model: options.speechModel } : {}),
          });
          return transcriber.transcribe(bytes, sniffed.mediaType, onProgress, signal ? { signal } : undefined);
        case 'xlsx':
        case 'ods':
        case 'pptx':
        case 'odp':
        case 'odt':
        case 'epub':
          return extractPackage(bytes, sniffed.kind, sniffed.mediaType);
        case 'encrypted-office':
          return refuseEncryptedOffice();
        case 'unsupported':
          throw new UnreadableContentError(`unsupported file type ${sniffed.mediaType}${filename ? ` (${filename})` : ''}`);
        default:
          return extractTextFile(bytes, sniffed.kind, sniffed.mediaType);
      }
    },
    async close() {
      await Promise.all([pool?.close(), transcriber?.close()]);
    },
  };
}
