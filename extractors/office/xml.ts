/**
 * Streaming XML for the office parts, over htmlparser2 in XML mode (already in the tree through
 * html-to-text): callbacks in document order, entities and CDATA decoded, no DOM built, no
 * external entity or DTD ever resolved. Tag names keep their prefixes ("a:t", "table:table-cell"),
 * which is how every office format names its elements in practice.
 */
import { Parser } from 'htmlparser2';

export interface XmlHandlers {
  open?(name: string, attributes: Record<string, string>): void;
  text?(text: string): void;
  close?(name: string): void;
}

export function walkXml(xml: string, handlers: XmlHandlers): void {
  const parser = new Parser(
    {
      onopentag: (name, attributes) => handlers.open?.(name, attributes),
      ontext: (text) => handlers.text?.(text),
      onclosetag: (name) => handlers.close?.(name),
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.end(xml);
}

/** Relationship id → target part path, from a part's .rels file. */
export function readRelationships(xml: string | undefined): Map<string, { target: string; type: string }> {
  const relationships = new Map<string, { target: string; type: string }>();
  if (xml === undefined) return relationships;
  walkXml(xml, {
    open(name, attributes) {
      if (name !== 'Relationship' || attributes.TargetMode === 'External') return;
      const id = attributes.Id;
      const target = attributes.Target;
      if (id && target) relationships.set(id, { target, type: attributes.Type ?? '' });
    },
  });
  return relationships;
}

/** The .rels part that belongs to a part: "ppt/slides/slide1.xml" → "ppt/slides/_rels/slide1.xml.rels". */
export function relationshipsPartOf(part: string): string {
  const slash = part.lastIndexOf('/');
  return `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
}

/**
 * Paragraph text of OpenDocument markup (text:p, text:h and their spans), shared by ODT, ODS and
 * ODP: spacing elements become spaces, tabs and line breaks; annotations, tracked deletions and
 * footnote bodies are left out (they are not the document's running text).
 */
export class OdfParagraphReader {
  private depthSkipped = 0;
  private buffer: string[] | undefined;
  private paragraphDepth = 0;

  constructor(private readonly onParagraph: (text: string, headingLevel: number | undefined) => void) {}

  private headingLevel: number | undefined;

  open(name: string, attributes: Record<string, string>): void {
    if (this.depthSkipped > 0 || SKIPPED.has(name)) {
      this.depthSkipped++;
      return;
    }
    if (name === 'text:p' || name === 'text:h') {
      this.paragraphDepth++;
      if (this.paragraphDepth === 1) {
        this.buffer = [];
        this.headingLevel = name === 'text:h' ? Number(attributes['text:outline-level'] ?? '1') || 1 : undefined;
      }
      return;
    }
    if (this.buffer === undefined) return;
    if (name === 'text:s') this.buffer.push(' '.repeat(Math.min(100, Math.max(1, Number(attributes['text:c'] ?? '1') || 1))));
    else if (name === 'text:tab') this.buffer.push('\t');
    else if (name === 'text:line-break') this.buffer.push('\n');
  }

  text(text: string): void {
    if (this.depthSkipped === 0 && this.buffer !== undefined) this.buffer.push(text);
  }

  close(name: string): void {
    if (this.depthSkipped > 0) {
      this.depthSkipped--;
      return;
    }
    if ((name === 'text:p' || name === 'text:h') && this.paragraphDepth > 0) {
      this.paragraphDepth--;
      if (this.paragraphDepth === 0 && this.buffer !== undefined) {
        const text = this.buffer.join('').trim();
        this.buffer = undefined;
        if (text !== '') this.onParagraph(text, this.headingLevel);
      }
    }
  }
}

const SKIPPED = new Set(['office:annotation', 'text:tracked-changes', 'text:note', 'draw:image']);
