/**
 * KaTeX, loaded with its CSS and fonts only when a page shows a formula (it is most of the
 * editor's weight otherwise). `katex.render` draws into an element through DOM calls, which the
 * app's CSP allows (no HTML string, no inline style attribute).
 */
import katex from 'katex';
import 'katex/dist/katex.min.css';

export function drawMath(formula: string, element: HTMLElement, displayMode: boolean): void {
  try {
    katex.render(formula, element, { displayMode, throwOnError: false, trust: false, strict: 'ignore', maxExpand: 200 });
  } catch {
    element.textContent = formula;
  }
}
