import { newId } from '../platform/ids.ts';
import type { Impact } from '../platform/db/schema.ts';

/** Rich-text documents of issues and clusters, built as GitBook's document model. */

type Mark = 'bold' | 'italic';
type Run = string | { text: string; marks: Mark[] };

function paragraph(runs: Run[]) {
  return {
    object: 'block' as const,
    type: 'paragraph',
    key: newId(12),
    data: {},
    nodes: [
      {
        object: 'text' as const,
        leaves: runs.map((r) =>
          typeof r === 'string'
            ? { object: 'leaf' as const, text: r, marks: [] }
            : { object: 'leaf' as const, text: r.text, marks: r.marks.map((type) => ({ object: 'mark' as const, type })) },
        ),
      },
    ],
  };
}

function quote(text: string) {
  return { object: 'block' as const, type: 'blockquote', key: newId(12), data: {}, nodes: [paragraph([text])] };
}

function doc(nodes: unknown[]) {
  return { object: 'document' as const, data: { schemaVersion: 1 }, nodes };
}

export const IMPACT_MEANING: Record<Impact, string> = {
  low: 'minor friction, users proceed with little or no guidance',
  medium: 'noticeable friction or partial blocking, workarounds exist',
  high: 'fully or near-fully blocking, repeated failures or data-loss risk, no viable workaround',
};

/** An issue's details: where it was reported, the customer's words quoted, and its impact. */
export function issueDetails(subject: string, evidence: string[], impact: Impact) {
  return doc([
    paragraph(subject ? ['Reported in the conversation ', { text: subject, marks: ['italic'] }, ':'] : ['Reported in a conversation:']),
    ...evidence.map(quote),
    paragraph([{ text: 'Impact', marks: ['bold'] }, `: ${impact} (${IMPACT_MEANING[impact]}).`]),
  ]);
}

/** A cluster's summary: its size, what it is about, and its most typical report. */
export function clusterSummary(input: { issues: number; conversations: number; keywords: string[]; example?: string | undefined; text?: string | undefined }) {
  const about = input.keywords.slice(0, 5);
  const nodes: unknown[] = [];
  if (input.text) nodes.push(paragraph([input.text]));
  nodes.push(
    paragraph([
      `${input.issues} ${input.issues === 1 ? 'issue' : 'issues'} from ${input.conversations} ${input.conversations === 1 ? 'conversation' : 'conversations'}`,
      ...(about.length ? [', about ', { text: about.join(', '), marks: ['bold'] as Mark[] }] : []),
      '.',
    ]),
  );
  if (input.example) nodes.push(paragraph(['Most typical report:']), quote(input.example));
  return doc(nodes);
}

/** An icon for a cluster from its keywords (Font Awesome names); `gear` when nothing fits. */
const ICONS: [RegExp, string][] = [
  [/^(login|log|sign|signin|password|sso|saml|auth|authent|2fa|mfa|otp|session|credenti)/, 'lock'],
  [/^(bill|invoic|payment|charg|card|subscript|plan|pric|refund|checkout)/, 'credit-card'],
  [/^(search|find|index)/, 'magnifying-glass'],
  [/^(api|token|endpoint|webhook|sdk|request|rate|json|cli)/, 'code'],
  [/^(export|pdf|download|import|upload|file|csv)/, 'file-export'],
  [/^(sync|git|github|gitlab|repo|branch|merg|commit)/, 'code-branch'],
  [/^(deploy|domain|dns|ssl|certif|host|publish|site)/, 'globe'],
  [/^(email|notif|mail|invit)/, 'envelope'],
  [/^(slow|perform|load|timeout|latenc|speed)/, 'gauge'],
  [/^(permiss|role|access|member|team|share|admin)/, 'users'],
  [/^(mobil|phone|ios|android|app)/, 'mobile'],
  [/^(crash|bug|error|broken)/, 'bug'],
];

export function iconFor(keywords: string[]): string {
  for (const keyword of keywords) {
    const k = keyword.toLowerCase();
    for (const [pattern, icon] of ICONS) if (pattern.test(k)) return icon;
  }
  return 'gear';
}
