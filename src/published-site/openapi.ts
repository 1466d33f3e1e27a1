import { escapeHtml } from './render.ts';

/**
 * OpenAPI blocks of a published page, from what the OpenAPI area resolved into `data.resolved`
 * (src/openapi/blocks.ts): an operation or webhook as an API reference (method, path, summary,
 * description, parameters, request body and responses), or schemas. Everything is escaped; schema
 * bodies are shown as JSON, capped in size so one block cannot make a page huge.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const MAX_JSON = 20_000;

function json(value: unknown): string {
  const text = JSON.stringify(value, null, 2) ?? '';
  return escapeHtml(text.length > MAX_JSON ? `${text.slice(0, MAX_JSON)}\n…` : text);
}

function text(value: unknown): string {
  return typeof value === 'string' ? escapeHtml(value) : '';
}

function schemaOf(media: Any): unknown {
  const content = media?.content && typeof media.content === 'object' ? media.content : undefined;
  const first = content ? (Object.values(content)[0] as Any) : undefined;
  return first?.schema ?? media?.schema;
}

export function openAPIBlockHtml(block: Any): string | undefined {
  const resolved = block?.data?.resolved;
  if (!resolved) return undefined;
  if (resolved.error && !resolved.operation && !resolved.schemas) return `<div class="openapi openapi-error" role="note">${text(resolved.error)}</div>`;
  if (resolved.schemas) {
    const items = Object.entries(resolved.schemas as Record<string, unknown>).map(([name, schema]) => `<section class="openapi-schema"><h4>${escapeHtml(name)}</h4><pre><code>${json(schema)}</code></pre></section>`);
    return `<div class="openapi">${items.join('')}</div>`;
  }
  const op = resolved.operation;
  if (!op) return undefined;
  const method = String(op.method ?? '').toUpperCase();
  const where = op.path ?? op.name ?? '';
  const params = Array.isArray(op.parameters) ? op.parameters : [];
  const paramRows = params
    .map((p: Any) => `<tr><td><code>${text(p?.name)}</code></td><td>${text(p?.in)}</td><td>${p?.required ? 'required' : ''}</td><td>${text(p?.schema?.type ?? p?.type)}</td><td>${text(p?.description)}</td></tr>`)
    .join('');
  const body = op.requestBody ? schemaOf(op.requestBody) : undefined;
  const responses = Object.entries((op.responses ?? {}) as Record<string, Any>)
    .map(([status, r]) => {
      const schema = schemaOf(r);
      return `<li><strong>${escapeHtml(status)}</strong> ${text(r?.description)}${schema ? `<pre><code>${json(schema)}</code></pre>` : ''}</li>`;
    })
    .join('');
  return `<section class="openapi openapi-operation" aria-label="${escapeHtml(`${method} ${where}`)}">
<p class="openapi-title"><span class="method method-${escapeHtml(method.toLowerCase())}">${escapeHtml(method)}</span> <code>${escapeHtml(String(where))}</code>${op.deprecated ? ' <span class="tag">deprecated</span>' : ''}</p>
${op.summary ? `<p><strong>${text(op.summary)}</strong></p>` : ''}${op.description ? `<p>${text(op.description)}</p>` : ''}
${paramRows ? `<div class="table-wrap"><table class="openapi-parameters"><thead><tr><th scope="col">Parameter</th><th scope="col">In</th><th scope="col">Required</th><th scope="col">Type</th><th scope="col">Description</th></tr></thead><tbody>${paramRows}</tbody></table></div>` : ''}
${body ? `<p>Request body</p><pre><code>${json(body)}</code></pre>` : ''}
${responses ? `<p>Responses</p><ul class="openapi-responses">${responses}</ul>` : ''}
</section>`;
}
