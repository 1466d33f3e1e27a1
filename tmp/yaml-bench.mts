import { stringify } from 'yaml';
import { parseSpecText } from '/work/wt-openapi/src/openapi/parse.ts';
const paths: Record<string, unknown> = {};
for (let i = 0; i < 12000; i++) paths[`/r${i}/{id}`] = { get: { operationId: `g${i}`, summary: `Read ${i}`, description: 'Returns it. '.repeat(10), parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/M' } } } } } } };
const text = stringify({ openapi: '3.1.0', info: { title: 'x', version: '1' }, paths });
console.log('yaml MB', (text.length / 1e6).toFixed(1));
const t0 = performance.now();
parseSpecText(text);
console.log('parse ms', (performance.now() - t0).toFixed(0), 'rss MB', (process.memoryUsage().rss / 1e6).toFixed(0));
