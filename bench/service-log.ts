/**
 * The bench's summary of the service log: how many entries, and the first at warn level or above
 * (or that no logger of ours wrote), so a run that logged problems says so beside its figures.
 */
import { readFileSync } from 'node:fs';
import { info } from './stats.js';

let logSummarized = false;

export function summarizeServiceLog(logFile: string): void {
  if (logSummarized) return;
  logSummarized = true;
  let text: string;
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return;
  }
  // Entries: pino JSON lines, or multi-line records from other loggers (e.g. the Temporal SDK's
  // default logger: "<ISO time> [LEVEL] message {...}"), or anything else (crash traces).
  const entries: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('{') || /^\d{4}-\d\d-\d\dT/.test(line) || entries.length === 0) entries.push(line);
    else entries[entries.length - 1] += `\n${line}`;
  }
  let json = 0;
  let foreign = 0;
  const problems: string[] = [];
  for (const entry of entries) {
    if (!entry.trim()) continue;
    try {
      const parsed = JSON.parse(entry) as { level?: number };
      json += 1;
      if ((parsed.level ?? 0) >= 40) problems.push(entry);
    } catch {
      foreign += 1;
      if (!/^\S+ \[(INFO|DEBUG|TRACE)\]/.test(entry)) problems.push(entry);
    }
  }
  info(
    `service log ${logFile}: ${json} JSON entries, ${foreign} non-JSON entries, ${problems.length} at warn level or above (or unrecognised)`,
  );
  for (const entry of problems.slice(0, 10)) info(`  ${entry.replace(/\s*\n\s*/g, ' ').slice(0, 600)}`);
}
