import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { crc32, deflateSync } from 'node:zlib';
import { SignJWT } from 'jose';
import { PDFParse } from 'pdf-parse';
import { addMember, changeRequestWith, editChangeRequest, mergeChanges, newSpace, openChangeRequest, orgWithSpace } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

/** A space whose change request holds Guide (with Install below it) and FAQ; the space itself is empty. */
async function setup() {
  const { admin: ann, org, space } = await orgWithSpace(t);
  const cr = await changeRequestWith(
    ann,
    space.id,
    [
      {
        operation: 'insert_page',
        ref: 'guide',
        title: 'Guide',
        document: { markdown: 'Welcome to the **guide** of Folio.\n\n## Steps\n\n- First bullet item\n- Second bullet item\n\n1. Numbered one\n\n```bash\nnpm run build-everything\n    npm run second-command\n```\n\n{% hint style="info" %}\nHinted remark here.\n{% endhint %}\n\n| Name | Value |\n| --- | --- |\n| alpha | beta |\n' },
      },
      { operation: 'insert_page', into: 'guide', title: 'Install', document: { markdown: 'Install with the installer program.\n' } },
      { operation: 'insert_page', title: 'FAQ', document: { markdown: 'Frequently asked questions.\n\nUnicode: café — 日本 ✓\n' } },
    ],
    { subject: 'First draft' },
  );
  const { data: tree } = await ann.api.spaces.listPagesInChangeRequest(space.id, cr.id);
  const guide = tree.pages[0] as { id: string; pages: { id: string }[] };
  return { ann, org, space, cr, guide: guide.id, install: guide.pages[0]!.id, faq: tree.pages[1]!.id };
}

/** A valid RGBA PNG of the given size (red pixels, half transparent). */
function pngOf(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 6, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => [255, 0, 0, 128]).flat())]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}

/** Downloads a PDF link without any token, checks it is a PDF and answers its text. */
async function download(url: string): Promise<string> {
  assert.ok(url.startsWith(`${t.url}/v1/`), url);
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/pdf');
  const data = new Uint8Array(await res.arrayBuffer());
  assert.equal(Buffer.from(data.subarray(0, 5)).toString('latin1'), '%PDF-');
  const parser = new PDFParse({ data });
  try {
    const { text, total } = await parser.getText();
    assert.ok(total >= 1);
    return text.replace(/\s+/g, ' ');
  } finally {
    await parser.destroy();
  }
}

describe('space PDF', () => {
  test('the main content, links left out; a page and those below it; readers only', async () => {
    const { ann, space, cr, guide } = await setup();
    // Nothing merged yet: an empty space prints its title page only.
    const empty = await download((await ann.api.spaces.getSpacePdf(space.id)).data.url);
    assert.ok(!empty.includes('Welcome to the guide'), empty);
    await ann.api.spaces.mergeChangeRequest(space.id, cr.id);
    await mergeChanges(ann, space.id, [{ operation: 'insert_page', type: 'link', title: 'Elsewhere', target: { kind: 'url', url: 'https://example.com/elsewhere' } } as never]);
    const text = await download((await ann.api.spaces.getSpacePdf(space.id)).data.url);
    assert.ok(text.indexOf('Welcome to the guide') < text.indexOf('installer program') && text.indexOf('installer program') < text.indexOf('Frequently'), text);
    assert.ok(!text.includes('example.com/elsewhere'), text);
    const part = await download((await ann.api.spaces.getSpacePdf(space.id, { page: guide })).data.url);
    assert.ok(part.includes('installer program') && !part.includes('Frequently'), part);
    await expectStatus(ann.api.spaces.getSpacePdf(space.id, { only: true }), 400);
    const outsider = await t.user('Olive Outsider');
    await expectStatus(outsider.api.spaces.getSpacePdf(space.id), 404);
  });
});

describe('change request PDF', () => {
  test('every page of the change request head, in tree order, with its text', async () => {
    const { ann, space, cr } = await setup();
    const { data } = await ann.api.spaces.getChangeRequestPdf(space.id, cr.id);
    const text = await download(data.url);
    for (const expected of ['Guide', 'Welcome to the guide of Folio.', 'Steps', 'First bullet item', 'Second bullet item', '1.', 'Numbered one', 'npm run build-everything npm run second-command', 'Hinted remark here.', 'alpha', 'beta', 'Install with the installer program.', 'Frequently asked questions.', 'café']) {
      assert.ok(text.includes(expected), `missing "${expected}" in ${text}`);
    }
    assert.ok(text.indexOf('Welcome') < text.indexOf('Install with') && text.indexOf('Install with') < text.indexOf('Frequently'), text);
    // By number as well; the same content gives the same document.
    const { data: again } = await ann.api.spaces.getChangeRequestPdf(space.id, String(cr.number));
    assert.equal(await download(again.url), text);
  });

  test('page prints a page and the pages below it; only=true that page alone', async () => {
    const { ann, space, cr, guide, install, faq } = await setup();
    const withChildren = await download((await ann.api.spaces.getChangeRequestPdf(space.id, cr.id, { page: guide })).data.url);
    assert.ok(withChildren.includes('Welcome to the guide') && withChildren.includes('installer program'), withChildren);
    assert.ok(!withChildren.includes('Frequently'), withChildren);
    const only = await download((await ann.api.spaces.getChangeRequestPdf(space.id, cr.id, { page: guide, only: true })).data.url);
    assert.ok(only.includes('Welcome to the guide'), only);
    assert.ok(!only.includes('installer program') && !only.includes('Frequently'), only);
    const leaf = await download((await ann.api.spaces.getChangeRequestPdf(space.id, cr.id, { page: install, only: true })).data.url);
    assert.ok(leaf.includes('installer program') && !leaf.includes('Welcome'), leaf);
    const last = await download((await ann.api.spaces.getChangeRequestPdf(space.id, cr.id, { page: faq })).data.url);
    assert.ok(last.includes('Frequently') && !last.includes('Welcome'), last);

    await expectStatus(ann.api.spaces.getChangeRequestPdf(space.id, cr.id, { page: 'nope' }), 404);
    await expectStatus(ann.api.spaces.getChangeRequestPdf(space.id, cr.id, { only: true }), 400);
    await expectStatus(ann.api.spaces.getChangeRequestPdf(space.id, 'nope'), 404);
  });

  test('PNG files shown on a page are embedded; unreadable ones print their alt text', async () => {
    const { ann, space, cr, faq } = await setup();
    const png = pngOf(4, 3);
    // A PNG whose image data is not a valid zlib stream.
    const corrupt = Buffer.concat([png.subarray(0, 41), Buffer.from('garbage!'), png.subarray(49)]);
    await editChangeRequest(ann, space.id, cr.id, [
      {
        operation: 'insert_files',
        files: [
          { name: 'dot.png', ref: 'dot', contentType: 'image/png', base64: png.toString('base64') },
          { name: 'broken.png', ref: 'broken', contentType: 'image/png', base64: Buffer.from('not an image').toString('base64') },
          { name: 'corrupt.png', ref: 'corrupt', contentType: 'image/png', base64: corrupt.toString('base64') },
        ],
      },
      { operation: 'update_page', page: faq, document: { markdown: 'Pictures.\n\n![a red dot](dot)\n\n![a broken picture](broken)\n\n![a corrupt picture](corrupt)\n' } },
    ]);
    const { data } = await ann.api.spaces.getChangeRequestPdf(space.id, cr.id, { page: faq, only: true });
    const text = await download(data.url);
    assert.ok(text.includes('[image: a broken picture]'), text);
    assert.ok(text.includes('[image: a corrupt picture]'), text);
    assert.ok(!text.includes('a red dot'), text);
    const raw = Buffer.from(await (await fetch(data.url)).arrayBuffer()).toString('latin1');
    assert.match(raw, /\/Subtype \/Image/);
  });

  test('tampered, foreign and expired links are refused with the error shape', async () => {
    const { ann, space, cr } = await setup();
    const { data } = await ann.api.spaces.getChangeRequestPdf(space.id, cr.id);
    const token = new URL(data.url).searchParams.get('token')!;
    assert.match(new URL(data.url).pathname, /^\/v1\/pdf\/First-draft\.pdf$/);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, blob: 'other' })).toString('base64url')}.${signature}`;
    const resigned = `${header}.${payload}.${signature.slice(0, -4)}AAAA`;
    const key = t.server.services.signingKey;
    const expired = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setAudience('folio:pdf').setExpirationTime(Math.floor(Date.now() / 1000) - 10).sign(key);
    const foreign = await new SignJWT({ blob: claims.blob, name: 'x.pdf' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(key);
    for (const bad of [forged, resigned, expired, foreign, 'garbage', '']) {
      const res = await t.request('GET', `/v1/pdf/First-draft.pdf?token=${bad}`);
      assert.equal(res.status, 401, bad);
      assert.equal(res.body.error.code, 401);
      assert.equal(typeof res.body.error.message, 'string');
    }
    assert.match((await t.request('GET', `/v1/pdf/x.pdf?token=${expired}`)).body.error.message, /expired/);
  });

  test('readers print; outsiders get 404; a token is required to ask', async () => {
    const { ann, org, space, cr } = await setup();
    const reader = await t.user('Reader');
    const outsider = await t.user('Outsider');
    await addMember(t, org.id, reader, 'read');
    const text = await download((await reader.api.spaces.getChangeRequestPdf(space.id, cr.id)).data.url);
    assert.ok(text.includes('Welcome to the guide'));
    await expectStatus(outsider.api.spaces.getChangeRequestPdf(space.id, cr.id), 404);
    assert.equal((await t.request('GET', `/v1/spaces/${space.id}/change-requests/${cr.id}/pdf`)).status, 401);
    // An empty change request still prints.
    const empty = await newSpace(ann, org.id, 'Empty');
    const emptyCr = await openChangeRequest(ann, empty.id, 'Nothing');
    assert.match(await download((await ann.api.spaces.getChangeRequestPdf(empty.id, emptyCr.id)).data.url), /no pages/);
  });
});
