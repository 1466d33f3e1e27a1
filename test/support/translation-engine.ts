import { createServer, type Server } from 'node:http';

/**
 * A fake translation engine on 127.0.0.1 for translation runs: LibreTranslate-compatible or
 * OpenAI-compatible. Both "translate" by upper-casing (placeholders and spaces survive), and
 * record every text they were sent, so tests can tell what went to the engine.
 */
export type Mode = 'ok' | 'flaky' | 'down';

export interface FakeEngine {
  url: string;
  mode: Mode;
  requests: number;
  /** Every text received, in order. */
  texts: string[];
  /** The system messages received (OpenAI-compatible). */
  systems: string[];
  server: Server;
}

export async function fakeEngine(kind: 'libretranslate' | 'openai'): Promise<FakeEngine> {
  const engine: FakeEngine = { url: '', mode: 'ok', requests: 0, texts: [], systems: [], server: undefined as never };
  engine.server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      engine.requests++;
      const reply = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (engine.mode === 'down') return reply(500, { error: 'engine is down for maintenance' });
      if (engine.mode === 'flaky' && engine.requests % 2 === 1) return reply(503, { error: 'busy' });
      const parsed = JSON.parse(body);
      if (kind === 'libretranslate') {
        if (req.url !== '/translate') return reply(404, { error: 'not found' });
        const texts: string[] = parsed.q;
        engine.texts.push(...texts);
        return reply(200, { translatedText: texts.map((t) => t.toUpperCase()) });
      }
      if (req.url !== '/v1/chat/completions' || parsed.model !== 'fake-model') return reply(404, { error: { message: 'unknown route or model' } });
      engine.systems.push(parsed.messages[0].content);
      const { texts } = JSON.parse(parsed.messages[1].content) as { texts: string[] };
      engine.texts.push(...texts);
      return reply(200, { choices: [{ message: { role: 'assistant', content: '```json\n' + JSON.stringify({ translations: texts.map((t) => t.toUpperCase()) }) + '\n```' } }] });
    });
  });
  await new Promise<void>((resolve) => engine.server.listen(0, '127.0.0.1', resolve));
  const address = engine.server.address() as { port: number };
  engine.url = kind === 'openai' ? `http://127.0.0.1:${address.port}/v1` : `http://127.0.0.1:${address.port}`;
  return engine;
}
