/**
 * Slide decks: PowerPoint (PPTX) and OpenDocument presentations (ODP). One section per slide in
 * presentation order, with its 1-based number and its title as the heading; the speaker notes
 * follow the slide's text. Slide numbers, dates and footers are left out.
 */
import type { ExtractedSection } from '../types.js';
import { openArchive, resolvePartPath } from './archive.js';
import { OdfParagraphReader, readRelationships, relationshipsPartOf, walkXml } from './xml.js';

export const PPTX_MEDIA_TYPE = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
export const ODP_MEDIA_TYPE = 'application/vnd.oasis.opendocument.presentation';

const TITLE_PLACEHOLDERS = new Set(['title', 'ctrTitle']);
/** Placeholders that repeat on every slide or show pictures of the slide, not its content. */
const BOILERPLATE_PLACEHOLDERS = new Set(['sldNum', 'dt', 'ftr', 'hdr', 'sldImg']);
const NOTES_RELATIONSHIP = /\/notesSlide$/;

interface SlideText {
  title: string[];
  body: string[];
}

/** Paragraphs of a DrawingML part (slide or notes page), title placeholders apart. */
function drawingParagraphs(xml: string): SlideText {
  const result: SlideText = { title: [], body: [] };
  let shape: { placeholder: string | undefined } | undefined;
  let shapeDepth = 0;
  let paragraph: string[] | undefined;
  let inText = false;
  walkXml(xml, {
    open(name, attributes) {
      if (name === 'p:sp' || name === 'p:graphicFrame') {
        shapeDepth++;
        if (shapeDepth === 1) shape = { placeholder: undefined };
      } else if (name === 'p:ph' && shape) {
        shape.placeholder = attributes.type ?? 'body';
      } else if (name === 'a:p') {
        paragraph = [];
      } else if (name === 'a:t') {
        inText = true;
      } else if ((name === 'a:br' || name === 'a:tab') && paragraph) {
        paragraph.push(name === 'a:br' ? '\n' : '\t');
      }
    },
    text(text) {
      if (inText && paragraph) paragraph.push(text);
    },
    close(name) {
      if (name === 'a:t') inText = false;
      else if (name === 'a:p' && paragraph) {
        const text = paragraph.join('').trim();
        paragraph = undefined;
        const placeholder = shape?.placeholder;
        if (text === '' || (placeholder !== undefined && BOILERPLATE_PLACEHOLDERS.has(placeholder))) return;
        (placeholder !== undefined && TITLE_PLACEHOLDERS.has(placeholder) ? result.title : result.body).push(text);
      } else if (name === 'p:sp' || name === 'p:graphicFrame') {
        shapeDepth--;
        if (shapeDepth === 0) shape = undefined;
      }
    },
  });
  return result;
}

function slideSection(number: number, slide: SlideText, notes: string[]): ExtractedSection | undefined {
  const title = slide.title.join(' ').replace(/\s+/g, ' ').trim();
  const blocks = [title, slide.body.join('\n'), notes.length > 0 ? `Notes: ${notes.join('\n')}` : ''].filter((block) => block !== '');
  if (blocks.length === 0) return undefined;
  const section: ExtractedSection = { text: blocks.join('\n\n'), slide: number, method: 'parse' };
  if (title !== '') section.heading = title;
  return section;
}

export function extractPptx(bytes: Uint8Array): ExtractedSection[] {
  const archive = openArchive(bytes, 'the presentation', 'ppt/presentation.xml', 'a PowerPoint presentation');
  const presentationPart = 'ppt/presentation.xml';
  const relationships = readRelationships(archive.text(relationshipsPartOf(presentationPart)));
  const slideParts: string[] = [];
  walkXml(archive.text(presentationPart) ?? '', {
    open(name, attributes) {
      if (name !== 'p:sldId') return;
      const target = relationships.get(attributes['r:id'] ?? '')?.target;
      if (target) slideParts.push(resolvePartPath(presentationPart, target));
    },
  });
  const sections: ExtractedSection[] = [];
  slideParts.forEach((part, index) => {
    const xml = archive.text(part);
    if (xml === undefined) return;
    let notes: string[] = [];
    for (const { target, type } of readRelationships(archive.text(relationshipsPartOf(part))).values()) {
      if (!NOTES_RELATIONSHIP.test(type)) continue;
      const notesXml = archive.text(resolvePartPath(part, target));
      if (notesXml !== undefined) notes = drawingParagraphs(notesXml).body;
    }
    const section = slideSection(index + 1, drawingParagraphs(xml), notes);
    if (section) sections.push(section);
  });
  return sections;
}

const ODP_BOILERPLATE = new Set(['page-number', 'date-time', 'footer', 'header']);

export function extractOdp(bytes: Uint8Array): ExtractedSection[] {
  const archive = openArchive(bytes, 'the presentation', 'content.xml', 'an OpenDocument presentation');
  const sections: ExtractedSection[] = [];
  let page: (SlideText & { notes: string[] }) | undefined;
  let pageNumber = 0;
  let inNotes = 0;
  /** presentation:class of each open draw:frame, innermost last. */
  const frames: (string | undefined)[] = [];
  const paragraphs = new OdfParagraphReader((text) => {
    if (!page) return;
    const frameClass = frames[frames.length - 1];
    if (frameClass !== undefined && ODP_BOILERPLATE.has(frameClass)) return;
    if (inNotes > 0) page.notes.push(text);
    else if (frameClass === 'title') page.title.push(text);
    else page.body.push(text);
  });
  walkXml(archive.text('content.xml') ?? '', {
    open(name, attributes) {
      if (name === 'draw:page') {
        pageNumber++;
        page = { title: [], body: [], notes: [] };
      } else if (name === 'presentation:notes') {
        inNotes++;
      } else if (name === 'draw:frame') {
        frames.push(attributes['presentation:class']);
      }
      paragraphs.open(name, attributes);
    },
    text(text) {
      paragraphs.text(text);
    },
    close(name) {
      paragraphs.close(name);
      if (name === 'draw:page' && page) {
        const section = slideSection(pageNumber, page, page.notes);
        if (section) sections.push(section);
        page = undefined;
      } else if (name === 'presentation:notes') {
        inNotes--;
      } else if (name === 'draw:frame') {
        frames.pop();
      }
    },
  });
  return sections;
}
