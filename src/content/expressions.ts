import type { Variables } from './model.ts';

/**
 * GitBook expressions in markdown: `<code class="expression">space.vars.name</code>` and
 * `page.vars.name`. Evaluation replaces each with the variable's value; unknown variables are left
 * as they are, so nothing is silently lost.
 */
const EXPRESSION = /<code class="expression">\s*(space|page)\.vars\.([A-Za-z0-9_-]+)\s*<\/code>/g;

export function evaluateExpressions(markdown: string, vars: { space: Variables; page: Variables }): string {
  return markdown.replace(EXPRESSION, (whole, scope: 'space' | 'page', name: string) => {
    const value = vars[scope][name];
    return value === undefined ? whole : String(value);
  });
}
