import { inflateSync } from 'node:zlib';
import { markdownToDocument } from '../content/markdown/markdown.ts';
import type { Block } from '../content/markdown/shared.ts';
import { blockLines, inlineText } from '../content/markdown/text.ts';

/** One page of content to print: its title, depth in the page tree (0 = top level) and markdown. */
export interface PrintedPage {
  title: string;
  depth: number;
  markdown: string;
}

export interface RenderOptions {
  /** Document title (PDF metadata). */
  title: string;
  /**
   * Creation date written into the document. The same content with the same date gives the same
   * bytes (the file id derives from it), so a stored PDF of an unchanged revision is shared.
   */
  createdAt: Date;
  /** Bytes of the PNG and JPEG files the pages show, by file id; other images print as their alt text. */
  images?: ReadonlyMap<string, Uint8Array>;
}

const FONT = { body: 'Helvetica', bold: 'Helvetica-Bold', italic: 'Helvetica-Oblique', mono: 'Courier' } as const;
const SIZE = { title: 22, h1: 17, h2: 14, h3: 12, body: 11, code: 9.5 } as const;
const MARGIN = 56;

/**
 * The standard PDF fonts only cover Windows-1252: other characters are shown as '?', never as
 * glyphs of the wrong letters.
 */
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');
function printable(text: string): string {
  let out = '';
  for (const ch of text.replace(/\t/g, '    ')) {
    const code = ch.codePointAt(0)!;
    out += ch === '\n' || (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.has(ch) ? ch : '?';
  }
  return out;
}

type Loose = { object?: string; type?: string; nodes?: Loose[]; data?: Record<string, unknown> };

class Writer {
  constructor(
    private readonly doc: PDFKit.PDFDocument,
    private readonly images: ReadonlyMap<string, Uint8Array>,
  ) {}

  private text(value: string, font: string, size: number, indent: number, opts: PDFKit.Mixins.TextOptions = {}) {
    this.doc.font(font).fontSize(size).text(printable(value), MARGIN + indent, undefined, {
      width: this.doc.page.width - 2 * MARGIN - indent,
      ...opts,
    });
  }

  private gap(lines = 0.5) {
    this.doc.moveDown(lines);
  }

  title(page: PrintedPage, first: boolean) {
    if (!first) this.doc.addPage();
    const size = page.depth === 0 ? SIZE.title : SIZE.h1 + 2;
    this.text(page.title, FONT.bold, size, 0);
    this.doc.outline.addItem(printable(page.title));
    this.gap(0.6);
  }

  blocks(blocks: readonly Block[], indent: number) {
    for (const block of blocks) this.block(block, indent);
  }

  private block(block: Block, indent: number) {
    const loose = block as unknown as Loose;
    switch (block.type) {
      case 'heading-1':
      case 'heading-2':
      case 'heading-3': {
        const size = block.type === 'heading-1' ? SIZE.h1 : block.type === 'heading-2' ? SIZE.h2 : SIZE.h3;
        this.gap(0.4);
        this.text(inlineText(block.nodes), FONT.bold, size, indent);
        this.gap(0.3);
        return;
      }
      case 'paragraph':
        this.text(inlineText(block.nodes), FONT.body, SIZE.body, indent);
        this.gap();
        return;
      case 'list-unordered':
      case 'list-ordered':
      case 'list-tasks': {
        const start = Number((loose.data as { start?: number } | undefined)?.start ?? 1);
        (loose.nodes ?? []).forEach((item, i) => {
          const marker =
            block.type === 'list-ordered'
              ? `${start + i}.`
              : block.type === 'list-tasks'
                ? (item.data as { checked?: boolean } | undefined)?.checked
                  ? '[x]'
                  : '[ ]'
                : '•';
          this.listItem(marker, (item.nodes ?? []) as unknown as Block[], indent);
        });
        this.gap(0.3);
        return;
      }
      case 'code': {
        const lines = block.nodes.map((line) => inlineText(line.nodes));
        this.text(lines.join('\n'), FONT.mono, SIZE.code, indent + 12, { lineGap: 1 });
        this.gap();
        return;
      }
      case 'divider':
        this.gap();
        return;
      case 'table':
        for (const [i, row] of blockLines(block).entries()) this.text(row, i === 0 ? FONT.bold : FONT.body, SIZE.body - 1, indent);
        this.gap();
        return;
      case 'images':
        for (const image of block.nodes) {
          const ref = image.data.ref;
          const data = ref.kind === 'file' ? this.images.get(ref.file) : undefined;
          if (!data || !this.image(data, indent)) this.text(`[image: ${image.data.alt ?? ''}]`, FONT.italic, SIZE.body, indent);
          this.gap(0.3);
        }
        this.gap();
        return;
      default: {
        // Hints, quotes, expandables, tabs: their child blocks, indented.
        const children = (loose.nodes ?? []).filter((n) => n.object === 'block') as unknown as Block[];
        if (children.length) {
          this.blocks(children, indent + 14);
        } else {
          const lines = blockLines(block).filter((l) => l.trim() !== '');
          if (lines.length) {
            this.text(lines.join('\n'), FONT.body, SIZE.body, indent);
            this.gap();
          }
        }
      }
    }
  }

  /** Draws an image scaled to fit the width (and at most a third of a page); false when it cannot be read. */
  private image(data: Uint8Array, indent: number): boolean {
    const width = this.doc.page.width - 2 * MARGIN - indent;
    const maxHeight = (this.doc.page.height - 2 * MARGIN) / 3;
    if (!readablePng(data) && !isJpeg(data)) return false;
    try {
      // Opened first (the typings lack `openImage`) to size it and to fail here on unreadable bytes.
      const image = (this.doc as unknown as { openImage(src: Buffer): { width: number; height: number } }).openImage(Buffer.from(data));
      const scale = Math.min(1, width / image.width, maxHeight / image.height);
      if (this.doc.y + image.height * scale > this.doc.page.height - MARGIN) this.doc.addPage();
      this.doc.image(image as never, MARGIN + indent, this.doc.y, { width: image.width * scale, height: image.height * scale });
      this.doc.y += image.height * scale;
      return true;
    } catch {
      return false; // not an image pdfkit reads (corrupt, or a format it does not embed)
    }
  }

  private listItem(marker: string, children: Block[], indent: number) {
    const y = this.doc.y;
    this.doc.font(FONT.body).fontSize(SIZE.body).text(printable(marker), MARGIN + indent, y, { width: 18, lineBreak: false });
    this.doc.y = y;
    const [first, ...rest] = children;
    const inner = indent + 20;
    if (first?.type === 'paragraph') {
      this.text(inlineText(first.nodes), FONT.body, SIZE.body, inner);
      this.blocks(rest, inner);
    } else {
      this.blocks(children, inner);
    }
  }
}

const MAX_IMAGE_PIXELS = 25_000_000;

function isJpeg(data: Uint8Array): boolean {
  return data.length > 4 && data[0] === 0xff && data[1] === 0xd8;
}

/**
 * Whether a PNG can be handed to pdfkit. pdfkit decodes some PNGs (alpha, transparency) in an
 * asynchronous callback where a corrupt stream throws outside any handler and would stop the
 * process, and decodes them to raw pixels in memory: so the chunks are walked, the image data is
 * inflated here (within the size its dimensions allow) and overly large images are refused.
 */
function readablePng(data: Uint8Array): boolean {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (b.length < 33 || b.readUInt32BE(0) !== 0x89504e47 || b.readUInt32BE(4) !== 0x0d0a1a0a) return false;
  const idat: Buffer[] = [];
  let width = 0;
  let height = 0;
  for (let i = 8; i + 8 <= b.length; ) {
    const length = b.readUInt32BE(i);
    const type = b.toString('latin1', i + 4, i + 8);
    if (i + 12 + length > b.length) return false;
    if (type === 'IHDR') {
      width = b.readUInt32BE(i + 8);
      height = b.readUInt32BE(i + 12);
    } else if (type === 'IDAT') idat.push(b.subarray(i + 8, i + 8 + length));
    else if (type === 'IEND') break;
    i += 12 + length;
  }
  if (!width || !height || width * height > MAX_IMAGE_PIXELS || !idat.length) return false;
  try {
    // Eight bytes per pixel (16-bit RGBA) and a filter byte per row bound any valid image.
    inflateSync(Buffer.concat(idat), { maxOutputLength: width * height * 8 + height });
    return true;
  } catch {
    return false;
  }
}

/** Prints pages (titles as headings, then their blocks) to a PDF document. */
export async function renderPdf(pages: readonly PrintedPage[], opts: RenderOptions): Promise<Uint8Array> {
  // pdfkit (and its fonts) is loaded on the first export, not at every start.
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    bufferPages: false,
    info: { Title: printable(opts.title), Creator: 'Folio', Producer: 'Folio', CreationDate: opts.createdAt, ModDate: opts.createdAt },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve());
    doc.on('error', reject);
  });
  const writer = new Writer(doc, opts.images ?? new Map());
  if (pages.length === 0) doc.font(FONT.italic).fontSize(SIZE.body).text('This change request has no pages.');
  pages.forEach((page, i) => {
    writer.title(page, i === 0);
    writer.blocks(markdownToDocument(page.markdown).nodes as Block[], 0);
  });
  doc.end();
  await done;
  return new Uint8Array(Buffer.concat(chunks));
}
