/**
 * Routes the Temporal SDK's own logs (TypeScript side and, forwarded, the Rust core) into our
 * structured pino logger at the configured level, instead of the SDK's multi-line console
 * output. Must run before the first NativeConnection is created.
 */
import { Runtime, type LogLevel, type LogMetadata } from '@temporalio/worker';
import type { Logger } from '../core/logger.js';

const PINO_METHOD = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;
const CORE_LEVEL: Record<string, 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR'> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
  fatal: 'ERROR',
  silent: 'ERROR',
};

/**
 * The SDK passes a failure as `error`; pino serialises Error objects (message, type, stack) only
 * under `err`, so "Activity failed" lines logged `"error":{}` and said nothing of the cause.
 */
export function withSerialisableError(meta: LogMetadata | undefined): LogMetadata {
  if (!meta || !(meta.error instanceof Error)) return meta ?? {};
  const { error, ...rest } = meta;
  return { ...rest, err: error };
}

let installed = false;

export function installTemporalLogging(logger: Logger, level: string): void {
  if (installed) return;
  installed = true;
  const temporalLogger = logger.child({ source: 'temporal' });
  const log = (logLevel: LogLevel, message: string, meta?: LogMetadata) =>
    temporalLogger[PINO_METHOD[logLevel]](withSerialisableError(meta), message);
  Runtime.install({
    logger: {
      log,
      trace: (message, meta) => log('TRACE', message, meta),
      debug: (message, meta) => log('DEBUG', message, meta),
      info: (message, meta) => log('INFO', message, meta),
      warn: (message, meta) => log('WARN', message, meta),
      error: (message, meta) => log('ERROR', message, meta),
    },
    // The service installs its own SIGINT/SIGTERM handling and drains the worker itself.
    shutdownSignals: [],
    telemetryOptions: { logging: { forward: {}, filter: { core: CORE_LEVEL[level] ?? 'WARN', other: 'WARN' } } },
  });
}
