/**
 * Logs on stdout (pino), one logger per process with a `component` field. JSON lines for
 * machines (a pipe, a file, a log collector, or LOG_FORMAT=json); one readable line per entry for
 * a person at a terminal (stdout is a TTY and LOG_FORMAT is `auto`, or LOG_FORMAT=pretty).
 */
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

export type LogFormat = 'auto' | 'json' | 'pretty';

export function createLogger(component: string, level: string = process.env.LOG_LEVEL ?? 'info', format: LogFormat = 'auto'): Logger {
  const options = { level, base: { component, pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime };
  return wantsPretty(format, process.stdout.isTTY === true) ? pino(options, prettyStdout()) : pino(options);
}

export function wantsPretty(format: LogFormat, stdoutIsTty: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && stdoutIsTty);
}

function prettyStdout(): DestinationStream {
  return { write: (line: string) => process.stdout.write(`${formatLogLine(line)}\n`) };
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
// Fields every entry has, shown in the line's head rather than as key=value.
const HEAD_FIELDS = new Set(['level', 'time', 'msg', 'component', 'pid', 'hostname']);

/**
 * One pino JSON line as `HH:MM:SS.mmm LEVEL component message key=value …`; an error's stack
 * follows on its own lines. A line that is not JSON is returned unchanged.
 */
export function formatLogLine(jsonLine: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine.trimEnd();
  }
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : '';
  const level = (typeof entry.level === 'number' ? LEVEL_NAMES[entry.level] : undefined) ?? String(entry.level ?? '');
  const head = [time, level.padEnd(5), entry.component ?? '', entry.msg ?? ''].filter((part) => part !== '').join(' ');
  let stack = '';
  const fields: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (HEAD_FIELDS.has(key) || value === undefined) continue;
    if ((key === 'err' || key === 'error') && value !== null && typeof value === 'object') {
      const error = value as { message?: unknown; stack?: unknown };
      fields.push(`${key}=${JSON.stringify(error.message ?? '')}`);
      if (typeof error.stack === 'string') stack = `\n    ${error.stack.split('\n').join('\n    ')}`;
      continue;
    }
    fields.push(`${key}=${typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)}`);
  }
  return `${head}${fields.length > 0 ? `  ${fields.join(' ')}` : ''}${stack}`;
}
