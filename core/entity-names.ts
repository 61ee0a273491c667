/**
 * The resolution key of an entity name, shared by the extractor (extractors/structure) and the graph
 * store, which recomputes an entity's keys when a delete takes some of its names away.
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
