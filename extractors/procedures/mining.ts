/**
 * Pattern mining over a collection's instances. Pure; store/workflows.ts feeds it and writes the result.
 *
 * An instance's signature is its sequence of verb classes with immediate repeats collapsed
 * ("submit approve approve pay" → "submit approve pay"). Distance between an instance and a
 * pattern is the optimal-string-alignment edit distance (insert, delete, substitute, swap two
 * neighbours: optional and reordered steps cost one each) divided by the longer length, taken
 * against the whole pattern or against one of its prefixes (an instance still running is close to
 * the start of its pattern). The prefix that matches best gives the instance's position: step k of n.
 *
 * Mining: group instances by signature; take groups most frequent first and put each in the
 * nearest cluster whose medoid is within LINK_DISTANCE, or start a cluster; then twice re-pick
 * every cluster's medoid (the member signature with the least total distance to the members,
 * longer on ties) and re-assign. A cluster is a pattern when it has at least MIN_SUPPORT instances
 * and its medoid chain itself occurs at least MIN_SUPPORT times (it recurs, not merely resembles).
 *
 * Confidence (docs/workflows.md):
 *   support  = 1 − exp(−(n − 1) / 3)             n = linked instances (recurrence)
 *   cohesion = mean over members of (1 − distance)
 *   evidence = mean over members of the share of traces linked to a graph entity or case identifier
 *   confidence = support × cohesion × (0.6 + 0.4 × evidence)
 * weighted_frequency = Σ 0.5^(age / 30 days), age = newest activity in the collection − the member's.
 */

export const LINK_DISTANCE = 0.4;
export const MIN_SUPPORT = 2;
export const MIN_SIGNATURE_LENGTH = 2;
const HALF_LIFE_MS = 30 * 86_400_000;

export function signatureOf(classes: readonly string[]): string[] {
  const signature: string[] = [];
  for (const verbClass of classes) if (signature[signature.length - 1] !== verbClass) signature.push(verbClass);
  return signature;
}

export const signatureKey = (signature: readonly string[]): string => signature.join(' > ');

/** Scratch table of `fillDistances`, grown as needed (mining runs it millions of times on short chains). */
let table = new Int32Array(64);

/**
 * Fills the optimal-string-alignment table of `a` against `b` (Damerau–Levenshtein without
 * repeated edits of a substring) and returns its width: cell (i, j) is the distance between
 * a's first i and b's first j items, so the last row holds a's distance to every prefix of b.
 */
function fillDistances(a: readonly string[], b: readonly string[]): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  if (table.length < rows * cols) table = new Int32Array(rows * cols * 2);
  const d = table;
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[(i - 1) * cols + j]! + 1, d[i * cols + j - 1]! + 1, d[(i - 1) * cols + j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[(i - 2) * cols + j - 2]! + 1);
      d[i * cols + j] = best;
    }
  }
  return cols;
}

/** Optimal string alignment distance (Damerau–Levenshtein without repeated edits of a substring). */
export function editDistance(a: readonly string[], b: readonly string[]): number {
  const cols = fillDistances(a, b);
  return table[a.length * cols + b.length]!;
}

export interface Alignment {
  /** Normalised distance in [0, 1]. */
  distance: number;
  /** 1-indexed step of the pattern the instance has reached. */
  step: number;
  /** The pattern's expected state count. */
  of: number;
}

/** How close an instance is to a pattern, and where in it the instance stands. */
export function align(instance: readonly string[], pattern: readonly string[]): Alignment {
  // One table gives the distance to the whole pattern and to each of its prefixes (its last row).
  const cols = fillDistances(instance, pattern);
  const last = instance.length * cols;
  let best: Alignment = {
    distance: table[last + pattern.length]! / Math.max(instance.length, pattern.length, 1),
    step: pattern.length,
    of: pattern.length,
  };
  const shortest = Math.max(MIN_SIGNATURE_LENGTH, instance.length - 1);
  for (let k = pattern.length - 1; k >= shortest; k--) {
    const distance = table[last + k]! / Math.max(instance.length, k);
    if (distance < best.distance) best = { distance, step: k, of: pattern.length };
  }
  return best;
}

export interface MiningInstance {
  id: string;
  signature: string[];
  lastActivityAt: number;
  /** Share of its traces linked to a graph entity or a case identifier, in [0, 1]. */
  evidence: number;
}

export interface PatternMember {
  id: string;
  distance: number;
  step: number;
  evidence: number;
  lastActivityAt: number;
}

export interface PatternStats {
  confidence: number;
  weightedFrequency: number;
  canonicalInstanceId: string;
  instanceCount: number;
}

export interface MinedPattern {
  signature: string[];
  members: PatternMember[];
  stats: PatternStats;
}

/** The numbers of a pattern from its members (see the module comment). */
export function patternStats(members: PatternMember[], newestActivityAt: number): PatternStats {
  const n = members.length;
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(values.length, 1);
  const support = 1 - Math.exp(-(n - 1) / 3);
  const cohesion = mean(members.map((member) => 1 - member.distance));
  const evidence = mean(members.map((member) => member.evidence));
  const confidence = Math.max(0, Math.min(1, support * cohesion * (0.6 + 0.4 * evidence)));
  const weightedFrequency = members.reduce(
    (sum, member) => sum + Math.pow(0.5, Math.max(0, newestActivityAt - member.lastActivityAt) / HALF_LIFE_MS),
    0,
  );
  const canonical = [...members].sort(
    (a, b) => a.distance - b.distance || b.step - a.step || b.lastActivityAt - a.lastActivityAt || (a.id < b.id ? -1 : 1),
  )[0];
  return {
    confidence: Math.round(confidence * 10_000) / 10_000,
    weightedFrequency: Math.round(weightedFrequency * 1000) / 1000,
    canonicalInstanceId: canonical?.id ?? '',
    instanceCount: n,
  };
}

interface Group {
  signature: string[];
  instances: MiningInstance[];
}

/** Nearest pattern signature within LINK_DISTANCE, if any. */
export function nearest(
  signature: readonly string[],
  patterns: readonly (readonly string[])[],
): { index: number; alignment: Alignment } | null {
  if (signature.length < MIN_SIGNATURE_LENGTH) return null;
  let best: { index: number; alignment: Alignment } | null = null;
  patterns.forEach((pattern, index) => {
    // A pattern shorter than the chain is at least (chain − pattern) / chain away, as is every
    // prefix of it: past LINK_DISTANCE, the alignment cannot link.
    if (pattern.length < signature.length && (signature.length - pattern.length) / signature.length > LINK_DISTANCE) return;
    const alignment = align(signature, pattern);
    if (alignment.distance > LINK_DISTANCE) return;
    if (
      !best ||
      alignment.distance < best.alignment.distance ||
      (alignment.distance === best.alignment.distance && pattern.length > patterns[best.index]!.length)
    ) {
      best = { index, alignment };
    }
  });
  return best;
}

/** Mines the patterns of one collection's instances (see the module comment). */
export function minePatterns(instances: MiningInstance[]): MinedPattern[] {
  const groups = new Map<string, Group>();
  for (const instance of instances) {
    if (instance.signature.length < MIN_SIGNATURE_LENGTH) continue;
    const key = signatureKey(instance.signature);
    const group = groups.get(key) ?? { signature: instance.signature, instances: [] };
    group.instances.push(instance);
    groups.set(key, group);
  }
  const ordered = [...groups.values()].sort(
    (a, b) =>
      b.instances.length - a.instances.length ||
      b.signature.length - a.signature.length ||
      signatureKey(a.signature).localeCompare(signatureKey(b.signature)),
  );

  let medoids: string[][] = [];
  for (const group of ordered) {
    if (!nearest(group.signature, medoids)) medoids.push(group.signature);
  }
  let assignment = assign(ordered, medoids);
  for (let round = 0; round < 2; round++) {
    const next: string[][] = [];
    const seen = new Set<string>();
    for (const members of assignment) {
      if (members.length === 0) continue;
      const medoid = pickMedoid(members);
      const key = signatureKey(medoid);
      if (!seen.has(key)) {
        seen.add(key);
        next.push(medoid);
      }
    }
    // Groups that fell out of every cluster start their own.
    const covered = new Set(assignment.flat().map((group) => signatureKey(group.signature)));
    for (const group of ordered)
      if (!covered.has(signatureKey(group.signature)) && !nearest(group.signature, next)) next.push(group.signature);
    medoids = next;
    assignment = assign(ordered, medoids);
  }

  const newest = instances.reduce((max, instance) => Math.max(max, instance.lastActivityAt), 0);
  const patterns: MinedPattern[] = [];
  assignment.forEach((groupsOfCluster, index) => {
    const signature = medoids[index]!;
    const members: PatternMember[] = groupsOfCluster.flatMap((group) => {
      const alignment = align(group.signature, signature);
      return group.instances.map((instance) => ({
        id: instance.id,
        distance: alignment.distance,
        step: alignment.step,
        evidence: instance.evidence,
        lastActivityAt: instance.lastActivityAt,
      }));
    });
    // A pattern is a chain that recurs: its canonical chain itself is seen MIN_SUPPORT times, so
    // one-offs that merely resemble each other (one edit apart) do not make one.
    const exact = groupsOfCluster.find((group) => signatureKey(group.signature) === signatureKey(signature))?.instances.length ?? 0;
    if (members.length >= MIN_SUPPORT && exact >= MIN_SUPPORT) patterns.push({ signature, members, stats: patternStats(members, newest) });
  });
  return patterns.sort((a, b) => b.stats.confidence - a.stats.confidence || b.members.length - a.members.length);
}

function assign(groups: Group[], medoids: string[][]): Group[][] {
  const clusters: Group[][] = medoids.map(() => []);
  for (const group of groups) {
    const found = nearest(group.signature, medoids);
    if (found) clusters[found.index]!.push(group);
  }
  return clusters;
}

function pickMedoid(groups: Group[]): string[] {
  let best: { signature: string[]; cost: number } | null = null;
  for (const candidate of groups) {
    let cost = 0;
    for (const group of groups) cost += group.instances.length * align(group.signature, candidate.signature).distance;
    if (!best || cost < best.cost - 1e-9 || (Math.abs(cost - best.cost) <= 1e-9 && candidate.signature.length > best.signature.length)) {
      best = { signature: candidate.signature, cost };
    }
  }
  return best!.signature;
}

const title = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

/** A pattern's name and description, from its steps only (never from a memory's text). */
export function describePattern(signature: readonly string[], instanceCount: number): { name: string; description: string } {
  return {
    name: signature.map(title).join(' → '),
    description: `Recurring procedure of ${signature.length} steps (${signature.join(', then ')}), observed in ${instanceCount} instances.`,
  };
}
