/** The corpus generator's seeded random helpers (bench/retrieval/corpus.ts). */
export type Rng = () => number;

export const pick = <T>(r: Rng, items: readonly T[]): T => items[Math.floor(r() * items.length)]!;
export const int = (r: Rng, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
export const chance = (r: Rng, p: number): boolean => r() < p;
export const list = (text: string): string[] =>
  text
    .split('|')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
export const capitalize = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);
export const article = (phrase: string): string => (/^[aeiou]/i.test(phrase) ? `an ${phrase}` : `a ${phrase}`);
export const LETTERS = 'ABCDEFGHJKLMNPRSTUVWXYZ';
export const letters = (r: Rng, n: number): string => Array.from({ length: n }, () => pick(r, [...LETTERS])).join('');
/** Fisher–Yates on a copy. */
export function shuffled<T>(r: Rng, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}
export const digits = (r: Rng, n: number): string => Array.from({ length: n }, (_, i) => String(int(r, i === 0 ? 1 : 0, 9))).join('');

/** Hands out values never used before anywhere in the corpus: every name and code is unambiguous. */
export class Unique {
  private readonly used = new Set<string>();

  from(r: Rng, items: readonly string[]): string {
    const free = items.filter((item) => !this.used.has(item.toLowerCase()));
    if (free.length === 0) throw new Error(`value pool exhausted (${items.slice(0, 3).join(', ')}, ...)`);
    const value = pick(r, free);
    this.used.add(value.toLowerCase());
    return value;
  }

  make(make: () => string): string {
    for (let attempt = 0; attempt < 1000; attempt++) {
      const value = make();
      if (this.used.has(value.toLowerCase())) continue;
      this.used.add(value.toLowerCase());
      return value;
    }
    throw new Error('could not make a unique value');
  }
}
