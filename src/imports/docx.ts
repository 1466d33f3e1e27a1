import { createHash } from 'node:crypto';
import mammoth from 'mammoth';

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

export class DocxError extends Error {}

export async function docxToHtml(bytes: Buffer): Promise<{ html: string; images: DocxImage[]; warnings: string[] }> {
  // A .docx is a zip archive: anything else is refused before mammoth sees it.
  if (bytes.length < 4 || bytes.readUInt32LE(0) !== 0x04034b50) throw new DocxError('the file is not a Word document (.docx): it is not a zip archive');
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
