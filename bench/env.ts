/**
 * The bench's numeric settings from the environment (BENCH_INGEST_COUNT=100 and the like): unset
 * or empty gives the default, and anything but a non-negative number stops the run with the
 * variable's name, instead of a NaN that would quietly run nothing or loop for ever.
 */
export function benchNumber(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name}=${raw}: expected a non-negative number`);
  return value;
}
