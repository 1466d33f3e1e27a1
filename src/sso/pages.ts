/** The small HTML pages of the single sign-on flow: never a stack trace, always what to do next. */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)} · Folio</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem;color:#222}code,pre{background:#f3f3f3;padding:0 .2em;overflow-wrap:anywhere;white-space:pre-wrap}button{font:inherit;padding:.3em 1em}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
}

export function errorPage(message: string, requestId: string, startURL?: string): string {
  return page(
    'Sign-in failed',
    `<p>${escapeHtml(message)}</p>
${startURL ? `<p><a href="${escapeHtml(startURL)}">Try signing in again</a></p>` : ''}
<p><small>Reference for your administrator: <code>${escapeHtml(requestId)}</code> (the server log says why).</small></p>`,
  );
}
