import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { addressRange, fetchMayReach, isPublicAddress } from '../src/content/files.ts';
import { ConfigError, loadConfig } from '../src/platform/config.ts';
import { startTestServer, type TestServer, type TestUser } from './support/server.ts';

// insert_files makes the server fetch URLs its callers name. These tests only ever reach local
// servers on 127.0.0.1 (and one on 127.0.0.2 that must never be reached).

type Change = Parameters<TestUser['api']['spaces']['updateChangeRequestContent']>[2]['changes'][number];
const c = (change: Record<string, unknown>) => change as unknown as Change;
const MB = 1024 * 1024;

interface Local {
  url: string;
  port: number;
  server: Server;
  /** TCP connections accepted so far. */
  connections: () => number;
  /** Requests received so far, by path. */
  paths: string[];
}

async function localServer(handler: (req: IncomingMessage, res: ServerResponse) => void, host = '127.0.0.1'): Promise<Local> {
  const paths: string[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    handler(req, res);
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://${host}:${port}`, port, server, connections: () => connections, paths };
}

function stop(local: Local) {
  local.server.closeAllConnections();
  local.server.close();
}

async function openCr(t: TestServer) {
  const ann = await t.user('Ann');
  const { data: org } = await ann.api.orgs.createOrganization({ title: 'Docs' });
  const { data: space } = await ann.api.orgs.createSpace(org.id, { title: 'Handbook' });
  const { data: cr } = await ann.api.spaces.createChangeRequest(space.id, { subject: 'Files' });
  return { ann, space, cr };
}

/** Status and message of a refused edit, through the official client. */
async function refusal(ann: TestUser, spaceId: string, crId: string, changes: Change[]): Promise<{ status: number; message: string }> {
  try {
    await ann.api.spaces.updateChangeRequestContent(spaceId, crId, { changes });
  } catch (err) {
    const e = err as { code?: number; errorMessage?: string };
    if (e.code === undefined) throw err;
    return { status: e.code, message: e.errorMessage ?? '' };
  }
  throw new Error('the edit was accepted');
}

const urlFiles = (...urls: string[]) => c({ operation: 'insert_files', files: urls.map((url, i) => ({ name: `f${i}.bin`, url })) });

describe('address classification', () => {
  // Each refused example names the range it must be found in.
  const refused: [string, string][] = [
    // IPv4
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.255', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.170', 'reserved'],
    ['192.0.2.1', 'reserved'], // documentation
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'], // benchmarking
    ['198.19.255.255', 'reserved'],
    // IPv6
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456:789a::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['2001:db8::1', 'reserved'],
    ['2001:2::1', 'benchmarking'],
    ['100::1', 'discard'],
    ['4000::1', 'reserved'], // outside global unicast 2000::/3
    // IPv4-mapped ::ffff:a.b.c.d
    ['::ffff:127.0.0.1', 'ipv4Mapped/loopback'],
    ['::ffff:7f00:1', 'ipv4Mapped/loopback'],
    ['::ffff:10.0.0.1', 'ipv4Mapped/private'],
    ['::ffff:169.254.169.254', 'ipv4Mapped/linkLocal'],
    ['::ffff:100.64.0.1', 'ipv4Mapped/carrierGradeNat'],
    ['::ffff:0.0.0.0', 'ipv4Mapped/unspecified'],
    // IPv4-translated ::ffff:0:a.b.c.d
    ['::ffff:0:127.0.0.1', 'rfc6145/loopback'],
    ['::ffff:0:a00:1', 'rfc6145/private'],
    ['::ffff:0:169.254.169.254', 'rfc6145/linkLocal'],
    // NAT64, well-known prefix 64:ff9b::/96
    ['64:ff9b::127.0.0.1', 'rfc6052/loopback'],
    ['64:ff9b::a9fe:a9fe', 'rfc6052/linkLocal'],
    ['64:ff9b::192.168.0.1', 'rfc6052/private'],
    // NAT64, local-use prefix 64:ff9b:1::/48: never globally routable, whatever it carries
    ['64:ff9b:1::a00:1', 'rfc6052/localUse'],
    ['64:ff9b:1::808:808', 'rfc6052/localUse'],
    ['64:ff9b:1:ffff::1', 'rfc6052/localUse'],
    // Teredo 2001::/32: server address, then the client address inverted
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo/reserved'], // client 192.0.2.45
    ['2001:0:4136:e378::80ff:fffe', 'teredo/loopback'], // client 127.0.0.1
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', 'teredo/private'], // server 10.0.0.1
    ['2001::', 'teredo/unspecified'],
    // 6to4 2002::/16
    ['2002:7f00:1::1', '6to4/loopback'],
    ['2002:a00:1::', '6to4/private'],
    ['2002:c0a8:101::1', '6to4/private'],
    ['2002:a9fe:a9fe::', '6to4/linkLocal'],
    // IPv4-compatible ::a.b.c.d (deprecated, never routed)
    ['::127.0.0.1', 'ipv4Compatible'],
    ['::10.0.0.1', 'ipv4Compatible'],
    ['::8.8.8.8', 'ipv4Compatible'],
    ['::7f00:1', 'ipv4Compatible'],
    // Not an address in standard notation: never trusted
    ['127.1', 'invalid'],
    ['0x7f.0.0.1', 'invalid'],
    ['2130706433', 'invalid'],
    ['017700000001', 'invalid'],
    ['localhost', 'invalid'],
    ['', 'invalid'],
  ];
  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '172.32.0.1', // just above 172.16.0.0/12
    '100.128.0.1', // just above 100.64.0.0/10
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '::ffff:0:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '64:ff9b::101:101',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7', // server 65.54.227.120, client 8.8.8.8
  ];

  test('every special-purpose range and every IPv6 form embedding one is refused', () => {
    for (const [address, range] of refused) {
      assert.equal(addressRange(address), range, address);
      assert.equal(isPublicAddress(address), false, address);
      assert.equal(fetchMayReach(address, { fetchAllowPrivate: false, fetchAllowCidrs: [] }), false, address);
    }
  });

  test('globally routable unicast passes, also through the IPv6 forms that carry it', () => {
    for (const address of allowed) {
      assert.equal(addressRange(address), 'unicast', address);
      assert.equal(isPublicAddress(address), true, address);
    }
  });

  test('configured ranges let a fetch reach exactly those addresses', () => {
    const config = { fetchAllowPrivate: false, fetchAllowCidrs: ['127.0.0.1/32', 'fd00::/8'] };
    for (const address of ['127.0.0.1', '::ffff:127.0.0.1', 'fd00::5', '8.8.8.8']) assert.equal(fetchMayReach(address, config), true, address);
    for (const address of ['127.0.0.2', '10.0.0.1', '::1', '::127.0.0.1', 'fc00::1', '169.254.169.254', '127.1']) assert.equal(fetchMayReach(address, config), false, address);
    for (const [address] of refused.filter(([, range]) => range !== 'invalid')) {
      assert.equal(fetchMayReach(address, { fetchAllowPrivate: true, fetchAllowCidrs: [] }), true, address);
    }
  });
});

test('fetch limits come from the environment, with safe defaults', () => {
  const defaults = loadConfig({});
  assert.deepEqual([defaults.fetchAllowPrivate, defaults.fetchAllowCidrs, defaults.fetchTimeoutMs, defaults.fetchMaxRequestBytes], [false, [], 30_000, 25 * MB]);
  const set = loadConfig({ FETCH_ALLOW_CIDRS: '10.1.0.0/16, fd00::/8', FETCH_TIMEOUT_MS: '5000', FETCH_MAX_REQUEST_BYTES: '1000' });
  assert.deepEqual([set.fetchAllowCidrs, set.fetchTimeoutMs, set.fetchMaxRequestBytes], [['10.1.0.0/16', 'fd00::/8'], 5000, 1000]);
  assert.throws(() => loadConfig({ FETCH_ALLOW_CIDRS: 'intranet' }), ConfigError);
  assert.throws(() => loadConfig({ FETCH_TIMEOUT_MS: '0' }), ConfigError);
  assert.throws(() => loadConfig({ FETCH_MAX_REQUEST_BYTES: 'lots' }), ConfigError);
});

describe('SSRF payloads with the default configuration', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ fetchTimeoutMs: 5000 });
  });
  after(() => t.close());

  test('no payload reaches anything, and none is applied', async () => {
    const target = await localServer((_req, res) => res.end('secret'));
    try {
      const { ann, space, cr } = await openCr(t);
      const p = target.port;
      const payloads = [
        target.url,
        `http://localhost:${p}/`,
        `http://LOCALHOST:${p}/`,
        `http://127.1:${p}/`,
        `http://127.0.1:${p}/`,
        `http://2130706433:${p}/`,
        `http://0x7f000001:${p}/`,
        `http://0x7f.0x0.0x0.0x1:${p}/`,
        `http://017700000001:${p}/`,
        `http://0177.0.0.01:${p}/`,
        `http://127.000.000.001:${p}/`,
        `http://0:${p}/`,
        `http://0.0.0.0:${p}/`,
        `http://[::]:${p}/`,
        `http://[::1]:${p}/`,
        `http://[0:0:0:0:0:0:0:1]:${p}/`,
        `http://[::ffff:127.0.0.1]:${p}/`,
        `http://[::ffff:7f00:1]:${p}/`,
        `http://[0:0:0:0:0:ffff:127.0.0.1]:${p}/`,
        `http://[::ffff:0:127.0.0.1]:${p}/`,
        `http://[::ffff:0:7f00:1]:${p}/`,
        `http://[64:ff9b::127.0.0.1]:${p}/`,
        `http://[64:ff9b::7f00:1]:${p}/`,
        `http://[64:ff9b:1::7f00:1]:${p}/`,
        `http://[64:ff9b:1::808:808]:${p}/`,
        `http://[2001:0:4136:e378::80ff:fffe]:${p}/`,
        `http://[2002:7f00:1::]:${p}/`,
        `http://[::127.0.0.1]:${p}/`,
        `http://user:pass@127.0.0.1:${p}/`,
        `http://example.com@127.0.0.1:${p}/`,
        `http://127.0.0.1:${p}#@example.com/`,
        `http://127.0.0.1:${p}?@example.com/`,
        `http://127.0.0.1:${p}/%2e%2e/`,
        `https://127.0.0.1:${p}/`,
        'http://10.0.0.1/',
        'http://10.255.255.255/',
        'http://172.16.0.1/',
        'http://192.168.0.1/',
        'http://169.254.169.254/latest/meta-data/',
        'http://[::ffff:169.254.169.254]/latest/meta-data/',
        'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
        'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/',
        'http://[2002:a9fe:a9fe::]/latest/meta-data/',
        'http://0xa9fea9fe/latest/meta-data/',
        'http://2852039166/latest/meta-data/',
        'http://100.100.100.200/latest/meta-data/',
        'http://100.64.0.1/',
        'http://192.0.0.192/',
        'http://198.18.0.1/',
        'http://224.0.0.1/',
        'http://255.255.255.255/',
        'http://[fe80::1]/',
        'http://[fc00::1]/',
        'http://[fd00:ec2::254]/latest/meta-data/',
        'http://[fec0::1]/',
        'http://[ff02::1]/',
        'http://[2001:db8::1]/',
        // Other schemes are never fetched.
        `file:///etc/passwd`,
        `gopher://127.0.0.1:${p}/_GET`,
        `ftp://127.0.0.1:${p}/`,
        `dict://127.0.0.1:${p}/`,
        `ws://127.0.0.1:${p}/`,
        'data:text/plain,hello',
        'javascript:alert(1)',
        `//127.0.0.1:${p}/`,
        `127.0.0.1:${p}`,
        `http:/\\127.0.0.1:${p}/`,
      ];
      for (const url of payloads) {
        const res = await refusal(ann, space.id, cr.id, [urlFiles(url)]);
        assert.equal(res.status, 400, url);
        assert.match(res.message, /private address|only http\(s\)|not a valid URL|must match format "uri"/, `${url}: ${res.message}`);
      }
      assert.equal(target.connections(), 0);
      assert.equal((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision, cr.revision);
    } finally {
      stop(target);
    }
  });
});

describe('fetch limits', () => {
  let t: TestServer;
  const TIMEOUT = 2000;
  const BUDGET = 3.5 * MB;
  before(async () => {
    // 127.0.0.1 is allowed so that the local servers can be reached; nothing else private is.
    t = await startTestServer({ fetchAllowCidrs: ['127.0.0.1/32'], fetchTimeoutMs: TIMEOUT, fetchMaxRequestBytes: BUDGET });
  });
  after(() => t.close());

  test('a server that drips bytes is cut off at the deadline with a 400 naming the URL and the limit', async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const drip = await localServer((req, res) => {
      if (req.url === '/silent') {
        // Accepts the request and never answers.
        req.socket.on('close', closed);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('x'), 100);
      res.on('close', () => {
        clearInterval(timer);
        closed();
      });
    });
    try {
      const { ann, space, cr } = await openCr(t);
      for (const path of ['/drip', '/silent']) {
        const started = Date.now();
        const res = await refusal(ann, space.id, cr.id, [urlFiles(`${drip.url}${path}`)]);
        const elapsed = Date.now() - started;
        assert.equal(res.status, 400, path);
        assert.ok(res.message.includes(`${drip.url}${path}`), res.message);
        assert.match(res.message, new RegExp(`did not finish within ${TIMEOUT} ms`));
        assert.ok(elapsed >= TIMEOUT - 100 && elapsed < TIMEOUT + 6000, `${path}: answered after ${elapsed} ms`);
      }
      // The connection is closed, not left dripping.
      await connectionClosed;
      assert.equal((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision, cr.revision);
    } finally {
      stop(drip);
    }
  });

  test('the deadline bounds all the fetches of a request together', async () => {
    // Each file takes ~0.6 s, well within the limit alone; five of them together do not fit.
    const slow = await localServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const timer = setInterval(() => {
        res.write('x');
        if (++sent === 10) {
          clearInterval(timer);
          res.end();
        }
      }, 60);
      res.on('close', () => clearInterval(timer));
    });
    try {
      const { ann, space, cr } = await openCr(t);
      const urls = [1, 2, 3, 4, 5].map((i) => `${slow.url}/${i}`);
      const started = Date.now();
      const res = await refusal(ann, space.id, cr.id, [urlFiles(...urls)]);
      const elapsed = Date.now() - started;
      assert.equal(res.status, 400);
      assert.match(res.message, /did not finish within 2000 ms, the time allowed for fetching the files of one request/);
      // Cut off on a later file, after earlier ones had arrived in full.
      const cut = urls.findIndex((url) => res.message.includes(`fetching ${url} `));
      assert.ok(cut >= 1, res.message);
      assert.deepEqual(slow.paths.slice(0, cut), ['/1', '/2', '/3', '/4', '/5'].slice(0, cut));
      assert.ok(elapsed >= TIMEOUT && elapsed < TIMEOUT + 6000, `answered after ${elapsed} ms`);
    } finally {
      stop(slow);
    }
  });

  test('a request naming many large files is refused once their bytes pass the budget, nothing stored', async () => {
    const endless = Buffer.alloc(64 * 1024, 1);
    const files = await localServer((req, res) => {
      if (req.url === '/endless') {
        // No length announced, and no end: only counting the bytes can stop it.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const pump = () => {
          while (!res.destroyed && res.write(endless));
        };
        res.on('drain', pump);
        pump();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': MB }).end(Buffer.alloc(MB, 7));
    });
    try {
      const { ann, space, cr } = await openCr(t);
      const many = Array.from({ length: 40 }, (_, i) => `${files.url}/big-${i}.bin`);
      const res = await refusal(ann, space.id, cr.id, [c({ operation: 'insert_page', title: 'Not applied', document: { markdown: 'x' } }), urlFiles(...many.slice(0, 20)), urlFiles(...many.slice(20))]);
      assert.equal(res.status, 400);
      assert.match(res.message, /changes\[1\] \(insert_files\)/);
      assert.ok(res.message.includes(`${files.url}/big-3.bin`), res.message);
      assert.match(res.message, new RegExp(`goes past ${BUDGET} bytes, the most that the files of one request may add up to`));
      // One after another: the fifth file and later were never asked for.
      assert.deepEqual(files.paths, ['/big-0.bin', '/big-1.bin', '/big-2.bin', '/big-3.bin']);

      // A body of unknown length is counted as it arrives and cut off at the budget.
      const streamed = await refusal(ann, space.id, cr.id, [urlFiles(`${files.url}/big-a.bin`, `${files.url}/endless`)]);
      assert.equal(streamed.status, 400);
      assert.match(streamed.message, new RegExp(`${files.url}/endless goes past ${BUDGET} bytes`));

      // Inline files count too.
      const inline = c({ operation: 'insert_files', files: [{ name: 'inline.bin', contentType: 'application/octet-stream', base64: Buffer.alloc(MB - 1024).toString('base64') }] });
      const mixed = await refusal(ann, space.id, cr.id, [inline, urlFiles(`${files.url}/b1.bin`, `${files.url}/b2.bin`, `${files.url}/b3.bin`)]);
      assert.equal(mixed.status, 400);
      assert.ok(mixed.message.includes(`${files.url}/b3.bin goes past`), mixed.message);

      const { data: head } = await ann.api.spaces.getChangeRequestById(space.id, cr.id);
      assert.equal(head.revision, cr.revision);
      assert.equal((await ann.api.spaces.listFilesInChangeRequestById(space.id, cr.id)).data.count, 0);

      // Within the budget, the same files are stored.
      await ann.api.spaces.updateChangeRequestContent(space.id, cr.id, { changes: [urlFiles(`${files.url}/ok-1.bin`, `${files.url}/ok-2.bin`, `${files.url}/ok-3.bin`)] });
      const { data: listed } = await ann.api.spaces.listFilesInChangeRequestById(space.id, cr.id);
      assert.deepEqual(listed.items.map((f) => f.size), [MB, MB, MB]);
    } finally {
      stop(files);
    }
  });

  test('redirects are followed a few times, each target vetted again', async () => {
    const hidden = await localServer((_req, res) => res.end('internal'), '127.0.0.2');
    const origin = await localServer((req, res) => {
      const chain = /^\/chain\/(\d+)$/.exec(req.url ?? '');
      const location =
        chain ? (chain[1] === '0' ? '/file.txt' : `/chain/${Number(chain[1]) - 1}`)
        : req.url === '/to-hidden' ? `${hidden.url}/secret`
        : req.url === '/to-loopback-v6' ? `http://[::1]:${hidden.port}/`
        : req.url === '/to-metadata' ? 'http://169.254.169.254/latest/meta-data/'
        : req.url === '/to-mapped' ? 'http://[::ffff:a9fe:a9fe]/latest/meta-data/'
        : req.url === '/to-nat64' ? 'http://[64:ff9b::a00:1]/'
        : req.url === '/to-file' ? 'file:///etc/passwd'
        : undefined;
      if (location) res.writeHead(req.url === '/chain/3' ? 307 : 302, { location }).end();
      else if (req.url === '/file.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
      else res.writeHead(404).end();
    });
    try {
      const { ann, space, cr } = await openCr(t);
      // Five redirects are followed.
      await ann.api.spaces.updateChangeRequestContent(space.id, cr.id, { changes: [urlFiles(`${origin.url}/chain/4`)] });
      const { data: listed } = await ann.api.spaces.listFilesInChangeRequestById(space.id, cr.id);
      assert.deepEqual(listed.items.map((f) => [f.contentType, f.size]), [['text/plain', 5]]);
      const { data: head } = await ann.api.spaces.getChangeRequestById(space.id, cr.id);

      const cases: [string, RegExp][] = [
        ['/chain/5', /redirects more than 5 times/],
        ['/to-hidden', /127\.0\.0\.2 is a private address/],
        ['/to-loopback-v6', /\[::1\] is a private address/],
        ['/to-metadata', /169\.254\.169\.254 is a private address/],
        ['/to-mapped', /private address/],
        ['/to-nat64', /private address/],
        ['/to-file', /only http\(s\)/],
      ];
      for (const [path, message] of cases) {
        const res = await refusal(ann, space.id, cr.id, [urlFiles(`${origin.url}${path}`)]);
        assert.equal(res.status, 400, path);
        assert.match(res.message, message, path);
      }
      assert.equal(hidden.connections(), 0);
      assert.equal((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision, head.revision);
    } finally {
      stop(origin);
      stop(hidden);
    }
  });
});
