import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { TestUser } from './server.ts';

/** An integration fixture (`test/fixtures/<name>/index.ts`) bundled as `gitbook publish` bundles one: one ES module, MODE defined. */
export async function bundleIntegration(fixture: string): Promise<string> {
  const out = await build({
    entryPoints: [fileURLToPath(new URL(`../fixtures/${fixture}/index.ts`, import.meta.url))],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    conditions: ['worker', 'browser'],
    define: { MODE: '"production"' },
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text;
}

export type RecordedEvent = { id: string; status: string; payload: Record<string, unknown> & { type: string } };

/** Waits until the integration's recorded events (newest first) satisfy `done`, and returns them. */
export async function eventsUntil(user: TestUser, name: string, done: (events: RecordedEvent[]) => boolean, ms = 30_000): Promise<RecordedEvent[]> {
  const until = Date.now() + ms;
  for (;;) {
    const { data } = await user.api.integrations.listIntegrationEvents(name, { limit: 100 });
    const items = data.items as unknown as RecordedEvent[];
    if (done(items)) return items;
    if (Date.now() > until) assert.fail(`events never got there: ${JSON.stringify(items.map((e) => [e.payload.type, e.status]))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
