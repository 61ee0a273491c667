/** Structured JSON logs on stdout (pino), one logger per process with a `component` field. */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(component: string, level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { component, pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}
