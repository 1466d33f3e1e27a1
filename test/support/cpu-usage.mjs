// Loaded into every node process of a test run (test/support/run.ts puts it in NODE_OPTIONS):
// a test file's process writes, as it exits, the CPU time it used, its own and that of the child
// processes it waited for (a `folio serve`, git, chromium), so the report can say where the time goes.
// Plain JavaScript, so it loads before any TypeScript hook; other node processes ignore it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.FOLIO_TEST_CPU_DIR;
const file = process.argv[1];
if (dir && file && /\.test\.[cm]?[jt]s$/.test(file)) {
  process.on('exit', () => {
    const own = process.cpuUsage();
    let children = 0;
    try {
      // /proc/self/stat fields 16 and 17: user and system time of waited-for children, in clock ticks (100 per second on Linux).
      const fields = readFileSync('/proc/self/stat', 'utf8').replace(/^.*\) /, '').split(' ');
      children = (Number(fields[13]) + Number(fields[14])) * 10;
    } catch {
      // not Linux: own time only
    }
    try {
      writeFileSync(join(dir, encodeURIComponent(file)), JSON.stringify({ ownMs: Math.round((own.user + own.system) / 1000), childrenMs: children }));
    } catch {
      // the run has ended and removed the directory
    }
  });
}
