/**
 * Benchmark: the PDF of a space (getSpacePDF) printed by Chromium, for spaces of 100, N and 2N
 * pages. The space is made by an import run of a generated Markdown folder (sections of chapters
 * of pages, each page with a heading, paragraphs, a hint, a code block, a table, a link to a
 * sibling and, every 25th page, a PNG). The time is from the request to the PDF downloaded (a big
 * space is printed by the background job: the link is polled); also the PDF's size and the peak
 * memory of Chromium (PSS of its processes under this one) and of this process.
 *
 *   npm run bench:pdf                  # BENCH_PAGES=500 (so 100, 500 and 1,000 pages)
 *   CHROMIUM_PATH=/path/to/chromium BENCH_PAGES=1000 npm run bench:pdf
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadConfig } from '../src/platform/config.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { apiCaller, folderZip, freshDatabaseConfig } from './support.ts';
import { pngImage } from '../test/support/png.ts';

const N = Number(process.env.BENCH_PAGES ?? 500);

/** Proportional memory (PSS) of this process's descendants (Chromium's processes), in bytes. */
function descendantsRss(): number {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  for (const pid of parent.keys()) {
    let p: number | undefined = parent.get(pid);
    while (p && p !== process.pid) p = parent.get(p);
    if (p !== process.pid) continue;
    try {
      // PSS: shared pages counted once across the processes, not once per process.
      const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      total += m ? Number(m[1]) * 1024 : 0;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

let peakChromium = 0;
let peakSelf = 0;
const sampler = setInterval(() => {
  peakChromium = Math.max(peakChromium, descendantsRss());
  peakSelf = Math.max(peakSelf, process.memoryUsage().rss);
}, 200);
sampler.unref();

/** A page of the generated folder: paragraphs, a hint, a titled code block, a table, a list. */
const printPage = (salt: string) => (title: string, sibling: string, image: boolean) =>
  `# ${title}\n\n${title} (${salt}): the first paragraph, with **bold** text and a [sibling](${sibling}). ${'Words of an ordinary paragraph that wraps over a few lines. '.repeat(4)}\n\n` +
  `## Usage\n\n:::tip\nA tip that becomes a hint.\n:::\n\n` +
  '```js title="example.js"\nconst folio = require("folio");\nconsole.log(folio.version);\n```\n\n| Option | Default |\n| --- | --- |\n| size | 10 |\n| mode | fast |\n\n- a list\n- of items\n' +
  (image ? `\n![diagram](../../images/diagram.png)\n` : '');

/** The image the generated folder's pages show: a real PNG, printed in the PDF. */
const diagram = pngImage(400, 200, (x, y) => [x % 256, y % 256, 128, 255]);

async function main() {
  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const config = loadConfig(process.env);
  const server = await startServer(
    { ...config, port: 0, logLevel: process.env.BENCH_LOG_LEVEL ?? 'silent', rateLimitMax: 1e9, databaseUrl: undefined, jobPollMs: 20, ...db.config },
    { purpose: 'bench' },
  );
  server.services.config.publicUrl = server.url;
  try {
    const store = server.services.db;
    const { token } = await createUser(store, { email: `bench.${Date.now()}@example.com`, name: 'Bench' });
    const call = apiCaller(server.url, token);
    const org = await call('POST', '/v1/orgs', { title: 'Bench' });

    const spaceOf = async (count: number) => {
      const name = `pdf-${count}`;
      const zip = folderZip(count, name, printPage(name), diagram);
      const space = await call('POST', `/v1/orgs/${org.id}/spaces`, { title: `Handbook of ${count} pages` });
      const up = await call('POST', `/v1/orgs/${org.id}/storage/upload`, { file: { name: `${name}.zip`, type: 'application/zip', size: zip.length }, kind: 'import_file' });
      const put = await fetch(up.url, { method: 'PUT', body: new Uint8Array(zip), headers: { 'content-type': 'application/zip' } });
      if (!put.ok) throw new Error(`upload: ${put.status}`);
      const run = await call('POST', `/v1/org/${org.id}/imports`, { source: { type: 'file', files: [up.key] }, target: { space: space.id } });
      for (;;) {
        const done = await call('GET', `/v1/org/${org.id}/imports/${run.id}`);
        if (done.status === 'failed') throw new Error(`import failed: ${done.reason}`);
        // Completed, and its job over (search re-indexed): the PDF job does not queue behind it.
        const busy = await store.selectFrom('jobs').select('id').where('status', 'in', ['queued', 'running']).where('run_at', '<=', new Date()).execute();
        if (done.status === 'completed' && !busy.length) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      // What the import leaves to do in the background (search indexing) is over: a call answers at once.
      for (;;) {
        const at = performance.now();
        await call('GET', `/v1/orgs/${org.id}`);
        if (performance.now() - at < 50) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      return space.id as string;
    };

    const printOnce = async (count: number) => {
      const space = await spaceOf(count);
      peakChromium = 0;
      const start = performance.now();
      const { url } = await call('GET', `/v1/spaces/${space}/pdf`);
      const answered = performance.now() - start;
      let res: Response;
      for (;;) {
        res = await fetch(url);
        if (res.status !== 503) break;
        await res.arrayBuffer();
      }
      if (!res.ok) throw new Error(`download: ${res.status} ${await res.text()}`);
      const bytes = (await res.arrayBuffer()).byteLength;
      const total = performance.now() - start;
      console.log(
        `  ${String(count).padStart(5)} pages: link after ${(answered / 1000).toFixed(2)} s, PDF downloaded after ${(total / 1000).toFixed(2)} s ` +
          `(${(total / count).toFixed(1)} ms a page), ${(bytes / 1024 / 1024).toFixed(1)} MB; Chromium peak PSS ${(peakChromium / 1024 / 1024).toFixed(0)} MB`,
      );
      return total;
    };

    console.log(`PDF of a space (Chromium at ${server.services.config.pdf.chromiumPath}, background job above ${server.services.config.pdf.backgroundPages} pages)`);
    await printOnce(20); // warm-up: Chromium starts
    const small = await printOnce(100);
    const t1 = await printOnce(N);
    const t2 = await printOnce(2 * N);
    console.log(`\nratio ${N}/100: ${(t1 / small).toFixed(2)}, ${2 * N}/${N}: ${(t2 / t1).toFixed(2)}; peak memory of this process (RSS): ${(peakSelf / 1024 / 1024).toFixed(0)} MB`);
  } finally {
    await server.close();
    await db.cleanup();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
