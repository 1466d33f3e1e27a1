import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pngImage } from './support/png.ts';
import { SignJWT } from 'jose';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { addMember, changeRequestWith, mergeChanges, newSpace, openChangeRequest, orgWithSpace } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer } from './support/server.ts';

/**
 * PDFs of spaces and change requests (src/pdf/), printed by the Chromium the browser tests use
 * (CHROMIUM_PATH, Debian's /usr/bin/chromium by default) and read back with pdf.js: the text of
 * every sheet, its link annotations and where they lead, the outline. One test server, so one
 * browser for the whole file.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let t: TestServer;
before(async () => {
  t = await startTestServer();
  t.server.services.config.pdf.chromiumPath = CHROMIUM;
});
after(async () => {
  await t?.close();
});

const GUIDE = `Welcome to the **guide** of Folio.

## Steps

- First bullet item
- Second bullet item

1. Numbered one

\`\`\`bash
npm run build-everything
    npm run second-command
\`\`\`

{% hint style="info" %}
Hinted remark here.
{% endhint %}

| Name | Value |
| --- | --- |
| alpha | beta |
`;

/** FAQ links to the Install page, to a heading of the Guide page and out of the space; it shows an image. */
const FAQ = `Frequently asked questions.

## Questions

Read [the installer page](guide/install.md), go back to [the steps](guide/README.md#steps), or see [the example site](https://example.com/docs).

![a red dot](dot)

Unicode: café — ✓
`;

/** Guide (with Install below it) and FAQ, in a change request of a space that is still empty. */
async function setup() {
  const { admin: ann, org, space } = await orgWithSpace(t);
  const cr = await changeRequestWith(
    ann,
    space.id,
    [
      { operation: 'insert_files', files: [{ name: 'dot.png', ref: 'dot', contentType: 'image/png', base64: pngImage(40, 30, () => [255, 0, 0, 128]).toString('base64') }] },
      { operation: 'insert_page', ref: 'guide', title: 'Guide', document: { markdown: GUIDE } },
      { operation: 'insert_page', into: 'guide', title: 'Install', document: { markdown: 'Install with the installer program.\n\nQuestions? See [the questions](../faq.md#questions).\n' } },
      { operation: 'insert_page', title: 'FAQ', document: { markdown: FAQ } },
    ] as never,
    { subject: 'First draft' },
  );
  const { data: tree } = await ann.api.spaces.listPagesInChangeRequest(space.id, cr.id);
  const guide = tree.pages[0] as { id: string; pages: { id: string }[] };
  return { ann, org, space, cr, guide: guide.id, install: guide.pages[0]!.id, faq: tree.pages[1]!.id };
}

interface ReadPdf {
  bytes: Buffer;
  title: string;
  /** The text of each sheet (whitespace collapsed). */
  sheets: string[];
  /** All the text. */
  text: string;
  /** Link annotations of each sheet: `to` is the 0-based sheet an internal link leads to, `url` an external one's target. */
  links: { sheet: number; to?: number; url?: string }[];
  outline: string[];
}

/** Downloads a PDF link without any token and reads it back. */
async function download(url: string): Promise<ReadPdf> {
  assert.ok(url.startsWith(`${t.url}/v1/`), url);
  const res = await fetch(url);
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get('content-type'), 'application/pdf');
  const bytes = Buffer.from(await res.arrayBuffer());
  assert.equal(bytes.subarray(0, 5).toString('latin1'), '%PDF-');
  const doc = await getDocument({ data: new Uint8Array(bytes), verbosity: 0 }).promise;
  try {
    const sheets: string[] = [];
    const links: ReadPdf['links'] = [];
    for (let i = 1; i <= doc.numPages; i++) {
      const page = await doc.getPage(i);
      const content = await page.getTextContent();
      sheets.push(
        content.items
          .map((item) => ('str' in item ? item.str : ''))
          .join(' ')
          .replace(/\s+/g, ' ')
          .trim(),
      );
      for (const a of (await page.getAnnotations()) as { subtype: string; dest?: string | unknown[]; url?: string }[]) {
        if (a.subtype !== 'Link') continue;
        if (a.url) links.push({ sheet: i - 1, url: a.url });
        else if (a.dest) {
          const dest = typeof a.dest === 'string' ? await doc.getDestination(a.dest) : a.dest;
          assert.ok(dest, `destination ${String(a.dest)} is in the document`);
          links.push({ sheet: i - 1, to: await doc.getPageIndex(dest[0] as never) });
        }
      }
    }
    const info = (await doc.getMetadata()).info as { Title?: string };
    const outline = ((await doc.getOutline()) ?? []).flatMap(function titles(o: { title: string; items?: unknown[] }): string[] {
      return [o.title, ...((o.items ?? []) as { title: string }[]).flatMap(titles)];
    });
    return { bytes, title: info.Title ?? '', sheets, text: sheets.join(' '), links, outline };
  } finally {
    await doc.destroy();
  }
}

/** The first sheet whose text includes `words`. */
function sheetOf(pdf: ReadPdf, words: string): number {
  const at = pdf.sheets.findIndex((s) => s.includes(words));
  assert.ok(at >= 0, `no sheet says "${words}": ${JSON.stringify(pdf.sheets)}`);
  return at;
}

/** Runs `fn` with some PDF settings of the test server changed, and puts them back after. */
async function withPdfSettings(changes: Partial<TestServer['server']['services']['config']['pdf']>, fn: () => Promise<void>): Promise<void> {
  const settings = t.server.services.config.pdf;
  const before = { ...settings };
  Object.assign(settings, changes);
  try {
    await fn();
  } finally {
    Object.assign(settings, before);
  }
}

describe('space PDF', () => {
  test('a title page, the contents, every page in order with its blocks, the image embedded, links inside the PDF', async () => {
    const { ann, space, cr } = await setup();
    await ann.api.spaces.mergeChangeRequest(space.id, cr.id);
    await mergeChanges(ann, space.id, [{ operation: 'insert_page', type: 'link', title: 'Elsewhere', target: { kind: 'url', url: 'https://example.com/elsewhere' } } as never]);
    const pdf = await download((await ann.api.spaces.getSpacePdf(space.id)).data.url);

    assert.equal(pdf.title, space.title);
    // Title page, then the contents, then the pages (each starting a sheet) in tree order.
    assert.ok(pdf.sheets[0]!.startsWith(space.title), pdf.sheets[0]);
    assert.ok(!pdf.sheets[0]!.includes('Welcome'), pdf.sheets[0]);
    assert.match(pdf.sheets[1]!, /^Contents Guide Install FAQ\b/);
    const guide = sheetOf(pdf, 'Welcome to the guide of Folio.');
    const install = sheetOf(pdf, 'Install with the installer program.');
    const faq = sheetOf(pdf, 'Frequently asked questions.');
    assert.ok(guide === 2 && guide < install && install < faq, JSON.stringify({ guide, install, faq }));
    assert.ok(pdf.sheets[guide]!.startsWith('Guide'), pdf.sheets[guide]);
    assert.ok(pdf.sheets[install]!.startsWith('Install'), pdf.sheets[install]);
    assert.ok(pdf.sheets[faq]!.startsWith('FAQ'), pdf.sheets[faq]);
    // The link page leads elsewhere: nothing of it is printed.
    assert.ok(!pdf.text.includes('Elsewhere') && !pdf.text.includes('example.com/elsewhere'), pdf.text);

    for (const expected of ['Steps', 'First bullet item', 'Second bullet item', 'Numbered one', 'npm run build-everything', 'npm run second-command', 'Hinted remark here.', 'Name', 'Value', 'alpha', 'beta', 'Questions', 'café — ✓']) {
      assert.ok(pdf.text.includes(expected), `missing "${expected}" in ${pdf.text}`);
    }
    // The PNG is an image of the PDF (its alt text is not printed in its place).
    assert.match(pdf.bytes.toString('latin1'), /\/Subtype \/Image/);
    assert.ok(!pdf.text.includes('a red dot'), pdf.text);

    // The contents lead to each page's sheet.
    const contents = pdf.links.filter((l) => l.sheet === 1).map((l) => l.to);
    assert.deepEqual(contents, [guide, install, faq]);
    // Links between pages jump inside the document (to the page, to a heading); a URL stays a URL.
    const fromFaq = pdf.links.filter((l) => l.sheet === faq);
    assert.deepEqual(fromFaq, [
      { sheet: faq, to: install },
      { sheet: faq, to: guide },
      { sheet: faq, url: 'https://example.com/docs' },
    ]);
    assert.deepEqual(
      pdf.links.filter((l) => l.sheet === install),
      [{ sheet: install, to: faq }],
    );
    // The outline (bookmarks) lists the pages and their headings.
    for (const title of ['Guide', 'Steps', 'Install', 'FAQ', 'Questions']) assert.ok(pdf.outline.includes(title), JSON.stringify(pdf.outline));
  });

  test('a page and those below it; only that page; an empty space; readers only', async () => {
    const { ann, space, cr, guide, faq } = await setup();
    // Nothing merged yet: the title page and empty contents.
    const empty = await download((await ann.api.spaces.getSpacePdf(space.id)).data.url);
    assert.ok(!empty.text.includes('Welcome to the guide'), empty.text);
    assert.match(empty.text, /no pages to print/);
    await ann.api.spaces.mergeChangeRequest(space.id, cr.id);

    const part = await download((await ann.api.spaces.getSpacePdf(space.id, { page: guide })).data.url);
    assert.ok(part.text.includes('installer program') && !part.text.includes('Frequently'), part.text);
    assert.match(part.sheets[1]!, /^Contents Guide Install\b/);
    const only = await download((await ann.api.spaces.getSpacePdf(space.id, { page: faq, only: true })).data.url);
    assert.ok(only.text.includes('Frequently') && !only.text.includes('Welcome') && !only.text.includes('installer program'), only.text);
    // Pages that are not printed: their links are text, not links to nowhere.
    assert.deepEqual(only.links.filter((l) => l.sheet === 2), [{ sheet: 2, url: 'https://example.com/docs' }]);

    await expectStatus(ann.api.spaces.getSpacePdf(space.id, { only: true }), 400);
    await expectStatus(ann.api.spaces.getSpacePdf(space.id, { page: 'nope' }), 404);
    const outsider = await t.user('Olive Outsider');
    await expectStatus(outsider.api.spaces.getSpacePdf(space.id), 404);
  });

  test('a group titles its pages on the sheet of its first page', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    await mergeChanges(ann, space.id, [
      { operation: 'insert_page', type: 'group', title: 'Guides', ref: 'guides' },
      { operation: 'insert_page', into: 'guides', title: 'Setup', document: { markdown: 'Set it up.\n' } },
    ] as never);
    const pdf = await download((await ann.api.spaces.getSpacePdf(space.id)).data.url);
    assert.match(pdf.sheets[1]!, /^Contents Guides Setup\b/);
    assert.equal(pdf.sheets.length, 3, JSON.stringify(pdf.sheets));
    assert.match(pdf.sheets[2]!, /^Guides Setup Set it up\./);
    // The contents link to the page, not to the group.
    assert.deepEqual(pdf.links.filter((l) => l.sheet === 1), [{ sheet: 1, to: 2 }]);
  });

  test('a space of more pages than PDF_BACKGROUND_PAGES is printed by a background job', async () => {
    const { ann, space, cr } = await setup();
    await ann.api.spaces.mergeChangeRequest(space.id, cr.id);
    await withPdfSettings({ backgroundPages: 2 }, async () => {
      const { data } = await ann.api.spaces.getSpacePdf(space.id);
      const db = t.server.services.db;
      const row = await db.selectFrom('pdf_exports').selectAll().where('space_id', '=', space.id).executeTakeFirstOrThrow();
      assert.equal(row.pages_total, 3);
      assert.ok(row.job_id !== null);
      const job = await db.selectFrom('jobs').select(['type']).where('id', '=', row.job_id!).executeTakeFirstOrThrow();
      assert.equal(job.type, 'pdf-export');
      // The link waits for the job.
      const pdf = await download(data.url);
      assert.ok(sheetOf(pdf, 'Welcome to the guide') < sheetOf(pdf, 'Frequently asked questions.'));
      const done = await db.selectFrom('pdf_exports').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
      assert.equal(done.status, 'done');
      assert.equal(done.pages_done, 3);
      // Asked again, the same content is not printed again.
      const again = await ann.api.spaces.getSpacePdf(space.id);
      assert.deepEqual((await download(again.data.url)).bytes, pdf.bytes);
      assert.equal((await db.selectFrom('pdf_exports').select('id').where('space_id', '=', space.id).execute()).length, 1);
    });
  });

  test('without Chromium: 503 naming what to install', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    await withPdfSettings({ chromiumPath: '/nonexistent/chromium' }, async () => {
      await expectStatus(ann.api.spaces.getSpacePdf(space.id), 503, /apt-get install chromium.*CHROMIUM_PATH/);
      const res = await t.request('GET', `/v1/spaces/${space.id}/pdf`, { token: ann.token });
      assert.equal(res.status, 503);
      assert.equal(res.body.error.code, 503);
      assert.match(res.body.error.message, /\/nonexistent\/chromium/);
    });
  });

  test('a print past PDF_TIMEOUT_MS is stopped: 503 saying so', async () => {
    const { ann, space, cr } = await setup();
    await ann.api.spaces.mergeChangeRequest(space.id, cr.id);
    await withPdfSettings({ timeoutMs: 1 }, async () => {
      await expectStatus(ann.api.spaces.getSpacePdf(space.id), 503, /took longer than .* \(PDF_TIMEOUT_MS\)/);
    });
    // The browser is still there for the next PDF.
    assert.ok((await download((await ann.api.spaces.getSpacePdf(space.id)).data.url)).text.includes('Welcome to the guide'));
  });

  test('a Chromium that does not start fails the background job; its link answers 503 with the reason', async () => {
    const { ann, space, cr } = await setup();
    await ann.api.spaces.mergeChangeRequest(space.id, cr.id);
    // An executable that is not a browser: there, so the request is accepted; it exits at once.
    await withPdfSettings({ chromiumPath: '/bin/true', backgroundPages: 0 }, async () => {
      const { data } = await ann.api.spaces.getSpacePdf(space.id);
      await t.server.services.jobs.settle();
      const res = await t.request('GET', new URL(data.url).pathname + new URL(data.url).search);
      assert.equal(res.status, 503);
      assert.equal(res.body.error.code, 503);
      assert.match(res.body.error.message, /could not be printed: Chromium at \/bin\/true did not start/);
      const row = await t.server.services.db.selectFrom('pdf_exports').selectAll().where('space_id', '=', space.id).executeTakeFirstOrThrow();
      assert.equal(row.status, 'failed');
    });
  });
});

describe('change request PDF', () => {
  test('the head of the change request, in tree order, through the same printing', async () => {
    const { ann, space, cr, guide, install } = await setup();
    const { data } = await ann.api.spaces.getChangeRequestPdf(space.id, cr.id);
    const pdf = await download(data.url);
    assert.equal(pdf.title, 'First draft');
    assert.match(pdf.sheets[0]!, /^First draft Change request #\d+ of /);
    assert.match(pdf.sheets[1]!, /^Contents Guide Install FAQ\b/);
    assert.ok(sheetOf(pdf, 'Welcome') < sheetOf(pdf, 'Install with') && sheetOf(pdf, 'Install with') < sheetOf(pdf, 'Frequently'));
    assert.ok(pdf.links.some((l) => l.sheet === sheetOf(pdf, 'Frequently') && l.to === sheetOf(pdf, 'Install with')));
    // By number as well; the same content is the same document.
    const { data: again } = await ann.api.spaces.getChangeRequestPdf(space.id, String(cr.number));
    assert.deepEqual((await download(again.url)).bytes, pdf.bytes);

    const only = await download((await ann.api.spaces.getChangeRequestPdf(space.id, cr.id, { page: guide, only: true })).data.url);
    assert.ok(only.text.includes('Welcome to the guide') && !only.text.includes('installer program'), only.text);
    const leaf = await download((await ann.api.spaces.getChangeRequestPdf(space.id, cr.id, { page: install })).data.url);
    assert.ok(leaf.text.includes('installer program') && !leaf.text.includes('Welcome'), leaf.text);
    await expectStatus(ann.api.spaces.getChangeRequestPdf(space.id, cr.id, { page: 'nope' }), 404);
    await expectStatus(ann.api.spaces.getChangeRequestPdf(space.id, cr.id, { only: true }), 400);
    await expectStatus(ann.api.spaces.getChangeRequestPdf(space.id, 'nope'), 404);
  });

  test('tampered, foreign and expired links are refused with the error shape', async () => {
    const { ann, space, cr } = await setup();
    const { data } = await ann.api.spaces.getChangeRequestPdf(space.id, cr.id);
    const token = new URL(data.url).searchParams.get('token')!;
    assert.match(new URL(data.url).pathname, /^\/v1\/pdf\/First-draft\.pdf$/);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, export: 'other' })).toString('base64url')}.${signature}`;
    const resigned = `${header}.${payload}.${signature.slice(0, -4)}AAAA`;
    const key = t.server.services.signingKey;
    const expired = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setAudience('folio:pdf').setExpirationTime(Math.floor(Date.now() / 1000) - 10).sign(key);
    const foreign = await new SignJWT({ export: claims.export }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(key);
    for (const bad of [forged, resigned, expired, foreign, 'garbage', '']) {
      const res = await t.request('GET', `/v1/pdf/First-draft.pdf?token=${bad}`);
      assert.equal(res.status, 401, bad);
      assert.equal(res.body.error.code, 401);
      assert.equal(typeof res.body.error.message, 'string');
    }
    assert.match((await t.request('GET', `/v1/pdf/x.pdf?token=${expired}`)).body.error.message, /expired/);
  });

  test('readers print; outsiders get 404; a token is required to ask; an empty change request prints', async () => {
    const { ann, org, space, cr } = await setup();
    const reader = await t.user('Reader');
    const outsider = await t.user('Outsider');
    await addMember(t, org.id, reader, 'read');
    const text = (await download((await reader.api.spaces.getChangeRequestPdf(space.id, cr.id)).data.url)).text;
    assert.ok(text.includes('Welcome to the guide'));
    await expectStatus(outsider.api.spaces.getChangeRequestPdf(space.id, cr.id), 404);
    assert.equal((await t.request('GET', `/v1/spaces/${space.id}/change-requests/${cr.id}/pdf`)).status, 401);
    const empty = await newSpace(ann, org.id, 'Empty');
    const emptyCr = await openChangeRequest(ann, empty.id, 'Nothing');
    assert.match((await download((await ann.api.spaces.getChangeRequestPdf(empty.id, emptyCr.id)).data.url)).text, /no pages to print/);
  });
});
