/**
 * Pattern mining over a collection's instances. Pure; core/procedures/derivation.ts feeds it and writes the result through the store.
 *
 * An instance's signature is its sequence of verb classes with immediate repeats collapsed
 * ("submit approve approve pay" → "submit approve pay"). Distance between an instance and a
 * pattern is the optimal-string-alignment edit distance (insert, delete, substitute, swap two
 * neighbours: optional and reordered steps cost one each) divided by the longer length, taken
 * against the whole pattern or against one of its prefixes (an instance still running is close to
 * the start of its pattern). The prefix that matches best gives the instance's position: step k of n.
 *
 * Mining: group instances by signature; take the recurring groups (at least MIN_SUPPORT instances)
 * most frequent first and put each in the nearest cluster whose medoid is within LINK_DISTANCE, or
 * start a cluster (at most MAX_PATTERNS); assign every group to its nearest medoid; then twice
 * re-pick every cluster's medoid (among its MEDOID_CANDIDATES most frequent recurring signatures,
 * the one with the least total distance to the members, longer on ties) and re-assign. A cluster
 * is a pattern when it has at least MIN_SUPPORT instances and its medoid chain itself occurs at
 * least MIN_SUPPORT times (it recurs, not merely resembles).
 *
 * Cost: nearest-medoid look-ups go through SignatureIndex, which aligns only medoids that share
 * enough verb classes with the chain to be within LINK_DISTANCE (an exact filter, see there), so
 * a mine is about G · (postings + survivors · L²) for G distinct signatures, not G² · L²; with
 * medoids drawn only from recurring signatures and capped, 10,000 distinct signatures mine in about
 * a second or less (bench: workflow_mine_5k_signatures_ms).
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
/** Patterns a collection keeps at most: the clusters of its most frequent recurring signatures. */
export const MAX_PATTERNS = 200;
/** Member signatures tried as a cluster's medoid, most frequent first. */
const MEDOID_CANDIDATES = 8;
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

let alignments = 0;
/** Alignments computed so far in this process (tests bound a mine's work by counting them). */
export const alignmentCount = (): number => alignments;

/** How close an instance is to a pattern, and where in it the instance stands. */
export function align(instance: readonly string[], pattern: readonly string[]): Alignment {
  alignments++;
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
  signature: readonly string[];
  instances: MiningInstance[];
}

/**
 * Pattern signatures indexed by verb class, for nearest-pattern look-ups that align only the
 * patterns that can be within LINK_DISTANCE. The filter is exact: an edit (insert, delete,
 * substitute, swap) changes max(|a|, |b|) − common(a, b) by at most one (common: the multiset
 * intersection of verb classes), so a chain of n steps within LINK_DISTANCE of a pattern prefix
 * of k steps shares at least (1 − LINK_DISTANCE) · max(n, k) ≥ (1 − LINK_DISTANCE) · n classes with
 * it, and k ≤ n / (1 − LINK_DISTANCE) (the k − n inserts alone cost that much). Counting the
 * shared classes through the postings of the chain's own classes rules out every other pattern.
 */
export class SignatureIndex {
  readonly signatures: (readonly string[])[] = [];
  /** Verb class → one entry per occurrence: the pattern's index and the position in its signature. */
  private readonly postings = new Map<string, { indexes: number[]; positions: number[] }>();
  /** Scratch per look-up: shared classes per pattern, and which patterns were touched. */
  private shared = new Int32Array(64);
  private hits = new Int32Array(64);
  private readonly touched: number[] = [];
  private readonly hitThisClass: number[] = [];

  constructor(signatures: readonly (readonly string[])[] = []) {
    for (const signature of signatures) this.add(signature);
  }

  get size(): number {
    return this.signatures.length;
  }

  add(signature: readonly string[]): void {
    const index = this.signatures.length;
    this.signatures.push(signature);
    if (this.shared.length < this.signatures.length) {
      const grown = new Int32Array(this.shared.length * 2);
      grown.set(this.shared);
      this.shared = grown;
      this.hits = new Int32Array(grown.length);
    }
    signature.forEach((verbClass, position) => {
      let list = this.postings.get(verbClass);
      if (!list) this.postings.set(verbClass, (list = { indexes: [], positions: [] }));
      list.indexes.push(index);
      list.positions.push(position);
    });
  }

  /** Nearest pattern within LINK_DISTANCE (ties: the longer pattern, then the earlier one), if any. */
  nearest(signature: readonly string[]): { index: number; alignment: Alignment } | null {
    const n = signature.length;
    if (n < MIN_SIGNATURE_LENGTH || this.signatures.length === 0) return null;
    const reach = Math.floor(n / (1 - LINK_DISTANCE) + 1e-9);
    const needed = Math.ceil((1 - LINK_DISTANCE) * n - 1e-9);
    const { shared, hits, touched, hitThisClass } = this;
    // Classes shared with the reachable prefix of every pattern (multiset intersection: a class
    // counts as often as both hold it), through the postings of the chain's own classes.
    for (let i = 0; i < n; i++) {
      const verbClass = signature[i]!;
      if (signature.indexOf(verbClass) !== i) continue; // each distinct class once
      const list = this.postings.get(verbClass);
      if (!list) continue;
      let inChain = 0;
      for (const other of signature) if (other === verbClass) inChain++;
      const { indexes, positions } = list;
      for (let k = 0; k < indexes.length; k++) {
        if (positions[k]! >= reach) continue;
        const index = indexes[k]!;
        if (hits[index]! >= inChain) continue;
        if (hits[index] === 0) hitThisClass.push(index);
        hits[index]!++;
        if (shared[index] === 0) touched.push(index);
        shared[index]!++;
      }
      for (const index of hitThisClass) hits[index] = 0;
      hitThisClass.length = 0;
    }
    // Shorter patterns are also bounded by length: every prefix of one is at least (n − m) / n away.
    const shortest = Math.ceil((1 - LINK_DISTANCE) * n - 1e-9);
    const candidates: number[] = [];
    for (const index of touched) {
      if (shared[index]! >= needed && this.signatures[index]!.length >= shortest) candidates.push(index);
      shared[index] = 0;
    }
    touched.length = 0;
    candidates.sort((a, b) => a - b);
    let best: { index: number; alignment: Alignment } | null = null;
    for (const index of candidates) {
      const pattern = this.signatures[index]!;
      const alignment = align(signature, pattern);
      if (alignment.distance > LINK_DISTANCE) continue;
      if (
        !best ||
        alignment.distance < best.alignment.distance ||
        (alignment.distance === best.alignment.distance && pattern.length > this.signatures[best.index]!.length)
      ) {
        best = { index, alignment };
      }
    }
    return best;
  }
}

/** Nearest pattern signature within LINK_DISTANCE, if any (one look-up; build a SignatureIndex for many). */
export function nearest(
  signature: readonly string[],
  patterns: readonly (readonly string[])[],
): { index: number; alignment: Alignment } | null {
  return new SignatureIndex(patterns).nearest(signature);
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
  // Only a chain that recurs can be a pattern's canonical chain: one-offs never seed a cluster.
  const recurring = ordered.filter((group) => group.instances.length >= MIN_SUPPORT);

  let medoids = new SignatureIndex();
  for (const group of recurring) {
    if (medoids.size >= MAX_PATTERNS) break;
    if (!medoids.nearest(group.signature)) medoids.add(group.signature);
  }
  let assignment = assign(ordered, medoids);
  for (let round = 0; round < 2; round++) {
    const next = new SignatureIndex();
    const seen = new Set<string>();
    for (const members of assignment) {
      if (members.length === 0) continue;
      const medoid = pickMedoid(members);
      const key = signatureKey(medoid);
      if (!seen.has(key)) {
        seen.add(key);
        next.add(medoid);
      }
    }
    // Recurring groups that fell out of every cluster start their own.
    const covered = new Set(assignment.flat().map((group) => signatureKey(group.signature)));
    for (const group of recurring) {
      if (next.size >= MAX_PATTERNS) break;
      if (!covered.has(signatureKey(group.signature)) && !next.nearest(group.signature)) next.add(group.signature);
    }
    medoids = next;
    assignment = assign(ordered, medoids);
  }

  const newest = instances.reduce((max, instance) => Math.max(max, instance.lastActivityAt), 0);
  const patterns: MinedPattern[] = [];
  assignment.forEach((groupsOfCluster, index) => {
    const signature = [...medoids.signatures[index]!];
    // A pattern is a chain that recurs: its canonical chain itself is seen MIN_SUPPORT times, so
    // one-offs that merely resemble each other (one edit apart) do not make one.
    const exact = groupsOfCluster.find((group) => signatureKey(group.signature) === signatureKey(signature))?.instances.length ?? 0;
    const size = groupsOfCluster.reduce((sum, group) => sum + group.instances.length, 0);
    if (size < MIN_SUPPORT || exact < MIN_SUPPORT) return;
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
    patterns.push({ signature, members, stats: patternStats(members, newest) });
  });
  return patterns.sort((a, b) => b.stats.confidence - a.stats.confidence || b.members.length - a.members.length);
}

function assign(groups: Group[], medoids: SignatureIndex): Group[][] {
  const clusters: Group[][] = medoids.signatures.map(() => []);
  for (const group of groups) {
    const found = medoids.nearest(group.signature);
    if (found) clusters[found.index]!.push(group);
  }
  return clusters;
}

function pickMedoid(groups: Group[]): readonly string[] {
  // Groups arrive most frequent first (assign keeps `ordered`'s order).
  const recurringMembers = groups.filter((group) => group.instances.length >= MIN_SUPPORT);
  const candidates = (recurringMembers.length > 0 ? recurringMembers : groups).slice(0, MEDOID_CANDIDATES);
  let best: { signature: readonly string[]; cost: number } | null = null;
  for (const candidate of candidates) {
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
