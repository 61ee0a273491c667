/**
 * Activation of a memory: how recently and how often it has been used, in (0, 1).
 *
 * It follows the base-level learning equation of ACT-R: every use j (and the creation itself)
 * leaves a trace that decays as a power of its age, and the traces add up:
 *
 *   x = Σ_j (1 + age_j / τ)^(-d)        activation = x / (1 + x)
 *
 * with age in hours, τ = 1 hour and d = 0.5. x / (1 + x) is the logistic of ln x (ACT-R's
 * activation), so it stays in (0, 1) and is comparable across queries. A memory created just now
 * scores 0.5; one created a day ago and never used about 0.17; a month-old unused one about 0.04;
 * one used five times in the last hour about 0.85. Uses are retrievals by id and appearances in
 * search results (the last 32 are kept).
 */
export const ACTIVATION_DECAY = 0.5;
export const ACTIVATION_TIME_UNIT_HOURS = 1;

const HOUR_MS = 3_600_000;

export function activationOf(createdAt: Date, accessedAt: readonly Date[] | undefined, now: number): number {
  let traces = 0;
  for (const moment of [createdAt, ...(accessedAt ?? [])]) {
    const ageHours = Math.max(0, now - moment.getTime()) / HOUR_MS;
    traces += (1 + ageHours / ACTIVATION_TIME_UNIT_HOURS) ** -ACTIVATION_DECAY;
  }
  return traces / (1 + traces);
}
