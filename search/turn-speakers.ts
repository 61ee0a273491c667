/**
 * Who speaks a turn, and which speakers a query is about, by rule (no model). Pure.
 *
 * A chat imported as messages `"<speaker>: <text>"` puts the speaker's name at the start of every
 * turn, so the name matches every turn of that speaker, in BM25 and in the embedding alike, and
 * tells none of them apart. But a question that names one participant of a conversation is
 * almost always answered by that participant's own turns (96 % of LoCoMo's evidence turns, for
 * questions that name one of its two speakers). So the speakers' names a query holds leave the
 * text that BM25 and the embedding see, and when it names some but not all of the speakers of
 * the searched collections, the turns of the others rank lower (search/turn-ranking.ts
 * `speakerMismatch`).
 */

/** "Caroline: …", "Dr. Ann Lee: …": one to four capitalised words, then a colon and a space. */
const SPEAKER_PREFIX = /^(\p{Lu}[\p{L}\p{M}'’.-]+(?: \p{Lu}[\p{L}\p{M}'’.-]*){0,3}): /u;

/** The lower-cased name of the turn's speaker, or undefined when the text has no speaker prefix. */
export function turnSpeaker(text: string): string | undefined {
  return SPEAKER_PREFIX.exec(text)?.[1]?.toLowerCase();
}

/** The turn's text after its speaker prefix (the whole text when it has none). */
export function withoutSpeaker(text: string): string {
  const prefix = SPEAKER_PREFIX.exec(text);
  return prefix ? text.slice(prefix[0].length) : text;
}

/** What a query says about the speakers: the ones it names, and its text without their names. */
export interface QuerySpeakers {
  named: ReadonlySet<string>;
  /** It names some speakers but not all: the turns of the others are not what it asks about. */
  partial: boolean;
  /** The query without the names (and their possessive 's): what BM25 and the embedding see. */
  text: string;
}

const escapeRegExp = (value: string): string => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The speakers (lower-cased, as `turnSpeaker` gives them) this query names, and the query without
 * them; null when it names none (or nothing but the names would be left).
 */
export function querySpeakers(query: string, speakers: Iterable<string>): QuerySpeakers | null {
  const all = [...new Set(speakers)];
  const named = new Set<string>();
  let text = query;
  // Longest names first, so "Ann Lee" goes before "Ann" could take part of it.
  for (const speaker of all.sort((a, b) => b.length - a.length)) {
    const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(speaker)}(?:['’]s)?(?![\\p{L}\\p{N}])`, 'giu');
    if (!pattern.test(text)) continue;
    named.add(speaker);
    text = text.replace(pattern, ' ');
  }
  if (named.size === 0) return null;
  text = text.replace(/\s+/g, ' ').trim();
  return /[\p{L}\p{N}]/u.test(text) ? { named, partial: named.size < all.length, text } : null;
}
