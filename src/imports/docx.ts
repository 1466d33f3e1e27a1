import { createHash } from 'node:crypto';
import mammoth from 'mammoth';
import { BadRequestError } from '../platform/errors.ts';

/**
 * Word `.docx` → HTML through mammoth (a maintained converter): headings, lists, tables, links,
 * bold/italic/strikethrough, footnotes. Images are not inlined as data URLs: each becomes a file of
 * its own (`image-<n>-<hash>.<ext>`), referenced by that name in the HTML's `<img src>`, so the
 * caller stores them as space files. What mammoth could not convert (unknown styles, unsupported
 * elements) comes back as warnings. The HTML then goes through htmlToGitbookMarkdown.
 */

export interface DocxImage {
  name: string;
  contentType: string;
  bytes: Buffer;
}

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/bmp': 'bmp', 'image/tiff': 'tiff', 'image/svg+xml': 'svg',
  'image/webp': 'webp', 'image/x-emf': 'emf', 'image/x-wmf': 'wmf',
};

// Word styles that have a meaning in GitBook beyond mammoth's defaults.
const STYLE_MAP = [
  "p[style-name='Title'] => h1:fresh",
  "p[style-name='Subtitle'] => p > em:fresh",
  "p[style-name='Code'] => pre:separator('\\n')",
  "p[style-name='Source Code'] => pre:separator('\\n')",
  "p[style-name='HTML Preformatted'] => pre:separator('\\n')",
  "r[style-name='Code Char'] => code",
  "r[style-name='Source Code Char'] => code",
  "r[style-name='HTML Code'] => code",
  "p[style-name='Quote'] => blockquote > p:fresh",
  "p[style-name='Intense Quote'] => blockquote > p:fresh",
];

/** A Word document Folio cannot read: a 400 with a message that says why. */
export class DocxError extends BadRequestError {}

export interface DocxLimits {
  /** Most bytes the archive's entries may add up to once uncompressed (default 200 MB). */
  maxUncompressedBytes?: number;
  /** Most entries in the archive (default 5,000). */
  maxEntries?: number;
}

/**
 * Checks the zip's central directory before anything is inflated: the number of entries and the
 * uncompressed sizes they declare (a zip bomb declares them too, or lies and then fails the
 * inflater's size check). ZIP64 archives (over 4 GB or 65,535 entries) are refused.
 */
function checkArchive(bytes: Buffer, limits: Required<DocxLimits>): void {
  const notZip = () => new DocxError('the file is not a Word document (.docx): it is not a zip archive');
  if (bytes.length < 22 || bytes.readUInt32LE(0) !== 0x04034b50) throw notZip();
  let end = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65_535); i--) {
    if (bytes.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw notZip();
  const entries = bytes.readUInt16LE(end + 10);
  const dirOffset = bytes.readUInt32LE(end + 16);
  if (entries === 0xffff || dirOffset === 0xffffffff) throw new DocxError('the Word document is a ZIP64 archive, larger than a document can be');
  if (entries > limits.maxEntries) throw new DocxError(`the Word document holds ${entries} files, more than the ${limits.maxEntries} a document may`);
  let total = 0;
  let at = dirOffset;
  for (let n = 0; n < entries; n++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== 0x02014b50) throw new DocxError('the Word document is a damaged zip archive');
    const size = bytes.readUInt32LE(at + 24);
    if (size === 0xffffffff) throw new DocxError('the Word document is a ZIP64 archive, larger than a document can be');
    total += size;
    if (total > limits.maxUncompressedBytes) throw new DocxError(`the Word document unpacks to more than ${limits.maxUncompressedBytes} bytes, more than a document may`);
    at += 46 + bytes.readUInt16LE(at + 28) + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
  }
}

export async function docxToHtml(bytes: Buffer, limits: DocxLimits = {}): Promise<{ html: string; images: DocxImage[]; warnings: string[] }> {
  // A .docx is a zip archive: anything else, or an archive too big once unpacked, is refused before mammoth sees it.
  checkArchive(bytes, { maxUncompressedBytes: limits.maxUncompressedBytes ?? 200 * 1024 * 1024, maxEntries: limits.maxEntries ?? 5_000 });
  const images: DocxImage[] = [];
  const warnings: string[] = [];
  let result: { value: string; messages: { type: string; message: string }[] };
  try {
    result = await mammoth.convertToHtml(
      { buffer: bytes },
      {
        styleMap: STYLE_MAP,
        // Images linked to files outside the document are never read from this machine.
        externalFileAccess: false,
        convertImage: mammoth.images.imgElement(async (image) => {
          const data = await image.readAsBuffer();
          const ext = EXTENSIONS[image.contentType] ?? 'bin';
          const name = `image-${images.length + 1}-${createHash('sha256').update(data).digest('hex').slice(0, 8)}.${ext}`;
          images.push({ name, contentType: image.contentType, bytes: data });
          return { src: name };
        }),
      },
    );
  } catch (err) {
    throw new DocxError(`the Word document could not be read: ${(err as Error).message}`);
  }
  for (const m of result.messages) {
    const text = `${m.type === 'error' ? 'error' : 'warning'} converting the Word document: ${m.message}`;
    if (!warnings.includes(text)) warnings.push(text);
  }
  return { html: result.value, images, warnings };
}
