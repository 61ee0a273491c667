/**
 * Text normalisation shared by the structure extractor: entity resolution keys and clipped descriptions.
 */

// Punctuation that may wrap a name in running text ("(Acme Corp.)", "“Berlin”", "**Kubernetes**").
// Currency and maths symbols ($, €, +) are deliberately absent: they belong to names like "$500" or "C++".
const SURROUNDING_PUNCTUATION = /^[\s"'“”‘’«»()[\]{}<>.,;:!?…*_~`|/\\–—-]+|[\s"'“”‘’«»()[\]{}<>.,;:!?…*_~`|/\\–—-]+$/gu;
const LEADING_ARTICLE = /^(?:the|a|an)\s+/u;
const TRAILING_POSSESSIVE = /(?<=\S)'s$/u;
const TRAILING_PLURAL_POSSESSIVE = /(?<=\Ss)'$/u;

/**
 * The resolution key of an entity name: lower case, NFKC, no leading article, no trailing possessive,
 * no surrounding punctuation, single spaces. "The Berlin Office." -> "berlin office".
 */
export function normalizeEntityName(name: string): string {
  let key = name.normalize('NFKC').toLowerCase().replace(/[‘’]/gu, "'").replace(/\s+/gu, ' ');
  key = key.replace(SURROUNDING_PUNCTUATION, '');
  key = key.replace(LEADING_ARTICLE, '');
  key = key.replace(TRAILING_POSSESSIVE, '').replace(TRAILING_PLURAL_POSSESSIVE, '');
  return key.replace(SURROUNDING_PUNCTUATION, '');
}

/** Collapses whitespace and cuts `text` to at most `maxChars`, at a word boundary when one is near. */
export function clipText(text: string, maxChars: number): string {
  const clean = text.replace(/\s+/gu, ' ').trim();
  if (clean.length <= maxChars) return clean;
  const cut = clean.slice(0, maxChars - 1);
  const lastSpace = cut.lastIndexOf(' ');
  // Only back off to a space if it does not throw away much of the budget.
  const body = lastSpace > maxChars * 0.7 ? cut.slice(0, lastSpace) : cut;
  return `${body.trimEnd()}…`;
}
