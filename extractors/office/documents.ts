/**
 * Flowing documents other than Word: OpenDocument text (ODT) and EPUB books. Both are cut into
 * one section per heading, like Markdown, HTML and DOCX.
 */
import { htmlSections, SectionCollector } from '../text-formats.js';
import { UnreadableContentError, type ExtractedSection } from '../types.js';
import { openArchive, resolvePartPath } from './archive.js';
import { OdfParagraphReader, walkXml } from './xml.js';

export const ODT_MEDIA_TYPE = 'application/vnd.oasis.opendocument.text';
export const EPUB_MEDIA_TYPE = 'application/epub+zip';

export function extractOdt(bytes: Uint8Array): ExtractedSection[] {
  const archive = openArchive(bytes, 'the OpenDocument text', 'content.xml', 'an OpenDocument text');
  const sections = new SectionCollector((body) => body.join('\n\n'));
  // Only the body: automatic styles and declarations before it hold no text.
  let inBody = false;
  const paragraphs = new OdfParagraphReader((text, headingLevel) => {
    if (headingLevel !== undefined) sections.startSection(text.replace(/\s+/g, ' '));
    else sections.body.push(text);
  });
  walkXml(archive.text('content.xml') ?? '', {
    open(name, attributes) {
      if (name === 'office:text') inBody = true;
      if (inBody) paragraphs.open(name, attributes);
    },
    text(text) {
      if (inBody) paragraphs.text(text);
    },
    close(name) {
      if (inBody) paragraphs.close(name);
      if (name === 'office:text') inBody = false;
    },
  });
  return sections.finish();
}

/** Encryption algorithms that only obfuscate embedded fonts (IDPF, Adobe): the text stays readable. */
const FONT_OBFUSCATION = new Set(['http://www.idpf.org/2008/embedding', 'http://ns.adobe.com/pdf/enc#RC']);
const XHTML_TYPES = new Set(['application/xhtml+xml', 'text/html']);

export function extractEpub(bytes: Uint8Array): ExtractedSection[] {
  const archive = openArchive(bytes, 'the EPUB book', 'META-INF/container.xml', 'an EPUB book');

  // DRM: any encryption other than font obfuscation means the chapters are ciphertext.
  const encryption = archive.text('META-INF/encryption.xml');
  if (encryption !== undefined) {
    walkXml(encryption, {
      open(name, attributes) {
        if (/(^|:)EncryptionMethod$/.test(name) && !FONT_OBFUSCATION.has(attributes.Algorithm ?? '')) {
          throw new UnreadableContentError('the EPUB book is encrypted (DRM)', { code: 'file_encrypted' });
        }
      },
    });
  }

  let packagePart: string | undefined;
  walkXml(archive.text('META-INF/container.xml') ?? '', {
    open(name, attributes) {
      if (/(^|:)rootfile$/.test(name) && packagePart === undefined) packagePart = attributes['full-path'];
    },
  });
  const packageXml = packagePart === undefined ? undefined : archive.text(packagePart);
  if (packagePart === undefined || packageXml === undefined) {
    throw new UnreadableContentError('the EPUB book is damaged: its package document is missing', { code: 'file_damaged' });
  }

  const manifest = new Map<string, { href: string; mediaType: string }>();
  const spine: string[] = [];
  walkXml(packageXml, {
    open(name, attributes) {
      const local = name.replace(/^.*:/, '');
      if (local === 'item' && attributes.id && attributes.href) {
        manifest.set(attributes.id, { href: attributes.href, mediaType: attributes['media-type'] ?? '' });
      } else if (local === 'itemref' && attributes.idref) {
        spine.push(attributes.idref);
      }
    },
  });

  const sections: ExtractedSection[] = [];
  for (const id of spine) {
    const item = manifest.get(id);
    if (!item || !XHTML_TYPES.has(item.mediaType)) continue;
    const html = archive.text(resolvePartPath(packagePart, decodeHref(item.href.split('#')[0] ?? '')));
    if (html !== undefined) sections.push(...htmlSections(html));
  }
  return sections;
}

/** Manifest hrefs are URLs: "chapter%201.xhtml" names the part "chapter 1.xhtml". */
function decodeHref(href: string): string {
  try {
    return decodeURIComponent(href);
  } catch {
    return href;
  }
}
