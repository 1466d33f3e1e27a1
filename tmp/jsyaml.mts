import { stringify } from 'yaml';
import jsyaml from 'js-yaml';
const paths: Record<string, unknown> = {};
for (let i = 0; i < 12000; i++) paths[`/r${i}/{id}`] = { get: { operationId: `g${i}`, summary: `Read ${i}`, description: 'Returns it. '.repeat(10), parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/M' } } } } } } };
const text = stringify({ openapi: '3.1.0', info: { title: 'x', version: '1' }, paths });
let t = performance.now();
jsyaml.load(text, { schema: jsyaml.JSON_SCHEMA });
console.log('js-yaml ms', (performance.now() - t).toFixed(0));
t = performance.now();
try { jsyaml.load('a: ' + '['.repeat(100000)); } catch (e) { console.log('deep:', (e as Error).constructor.name, (e as Error).message.slice(0, 80)); }
console.log('deep ms', (performance.now() - t).toFixed(0));
try { jsyaml.load('a: 1\na: 2\n'); } catch (e) { console.log('dup:', (e as Error).message.split('\n')[0], (e as any).mark?.line); }
