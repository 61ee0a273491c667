/**
 * Text normalisation shared by the structure extractor: entity resolution keys (core/entity-names.ts)
 * and clipped descriptions.
 */

export { normalizeEntityName } from '../../core/entity-names.js';

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
