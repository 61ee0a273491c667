/** Small numeric helpers for the bench: percentiles over samples and metric-line formatting. */

/** Nearest-rank percentile (p in 0..100) of the samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  const index = Math.min(sorted.length - 1, Math.max(0, rank - 1));
  return sorted[index]!;
}

export function mean(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  return samples.reduce((sum, value) => sum + value, 0) / samples.length;
}

/** Each of `fields` averaged over the rows (a macro average: each row weighs the same); NaN when there are none. */
export function fieldMeans<K extends string>(rows: readonly Record<K, number>[], fields: readonly K[]): Record<K, number> {
  return Object.fromEntries(fields.map((field) => [field, mean(rows.map((row) => row[field]))])) as Record<K, number>;
}

/** One decimal for values under 1000, whole numbers above; always a plain decimal string. */
export function formatValue(value: number): string {
  if (!Number.isFinite(value)) return 'NaN';
  if (Number.isInteger(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return value.toFixed(0);
  if (abs >= 1) return value.toFixed(1);
  return value.toFixed(3);
}

/** Writes one `name value unit` line to stdout: the bench's only stdout output. */
export function metric(name: string, value: number, unit: string): void {
  process.stdout.write(`${name} ${formatValue(value)} ${unit}\n`);
}

/** A figure and, on the next line, its goal (`<name>_goal`, in the same unit). */
export function metricWithGoal(name: string, value: number, goal: number, unit: string): void {
  metric(name, value, unit);
  metric(`${name}_goal`, goal, unit);
}

/** Progress and notes go to stderr so stdout stays machine-readable. */
export function info(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** Milliseconds as seconds, for metric lines. */
export const seconds = (ms: number): number => ms / 1000;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
