import { createServer } from 'node:http';
import { processSource } from '/work/wt-openapi/src/openapi/process.ts';
const files: Record<string,string> = {
  '/api/openapi.yaml': `openapi: 3.0.3
info: {title: T, version: "1"}
paths:
  /pets:
    get:
      summary: List pets
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "schemas/pet.yaml#/Pet"}
`,
  '/api/schemas/pet.yaml': `Pet:
  type: object
  properties:
    name: {type: string}
    tag: {$ref: "./tag.yaml"}
`,
  '/api/schemas/tag.yaml': `type: string\n`,
  '/bad.yaml': `openapi: 3.0.3
info: {title: T}
paths:
  /pets:
    get:
      responses:
        "200": {descr: x}
`,
};
const srv = createServer((req, res) => { const f = files[req.url!]; if (!f) { res.statusCode = 404; return res.end(); } res.end(f); });
await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
const port = (srv.address() as any).port;
const cfg = { fetchAllowPrivate: false, fetchAllowCidrs: ['127.0.0.1/32'], fetchTimeoutMs: 2000, fetchMaxRequestBytes: 1e7 };
let r = await processSource({ url: `http://127.0.0.1:${port}/api/openapi.yaml` }, cfg);
console.log(JSON.stringify(r, (k, v) => k === 'raw' ? undefined : v).slice(0, 800));
r = await processSource({ url: `http://127.0.0.1:${port}/bad.yaml` }, cfg);
console.log(JSON.stringify(r, null, 1));
r = await processSource({ url: `http://127.0.0.2:${port}/bad.yaml` }, cfg);
console.log(JSON.stringify(r));
r = await processSource({ text: 'a: &a [1,2]\nb: *a\nc: [[[[' }, cfg);
console.log(JSON.stringify(r));
srv.close();
