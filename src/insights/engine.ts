import type { Config } from '../platform/config.ts';
import type { Impact } from '../platform/db/schema.ts';
import { embedTexts, EngineError, postJson } from '../ai/client.ts';
import { extractIssues, titleOf, type ConversationText, type ExtractedIssue } from './extract.ts';

/**
 * The engines behind conversation insights. The built-in one needs nothing external (extract.ts,
 * text.ts, cluster.ts). With AI_ENGINE_URL (or INSIGHTS_ENGINE_URL), an OpenAI-compatible API (a
 * hosted service or a local server) does what it is configured for: extraction, labels and summaries with
 * AI_MODEL (`POST {url}/chat/completions`), issue vectors with AI_EMBEDDING_MODEL
 * (`POST {url}/embeddings`), through the engine client of src/ai (outbound address rules apply).
 */

export interface ClusterDescription {
  label: string;
  summary: string;
  icon?: string | undefined;
}

export interface ClusterSample {
  keywords: string[];
  titles: string[];
  evidence: string[];
}

export interface Engine {
  /** `tfidf` or `embedding:<model>`: the kind of vectors issues get. */
  vectorKind: string;
  extract(conversation: ConversationText): Promise<ExtractedIssue[]>;
  /** Dense vectors for texts, when an embedding model is configured. */
  embed?: (texts: string[]) => Promise<number[][]>;
  /** A label and summary for a cluster, when a chat model is configured. */
  describe?: (sample: ClusterSample) => Promise<ClusterDescription | undefined>;
}

export const builtInEngine: Engine = {
  vectorKind: 'tfidf',
  extract: async (conversation) => extractIssues(conversation),
};

const IMPACTS: readonly Impact[] = ['low', 'medium', 'high'];

type EngineConfig = Pick<Config, 'aiEngineUrl' | 'aiEngineKey' | 'aiModel' | 'aiEmbeddingModel' | 'fetchAllowPrivate' | 'fetchAllowCidrs' | 'fetchTimeoutMs' | 'fetchMaxRequestBytes'>;

/** The JSON object in a chat answer (models sometimes wrap it in a code fence). */
function chatJson(answer: any, what: string): any {
  const content = answer?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') throw new EngineError(`${what}: the chat answer has no message content`);
  const text = content.replace(/^\s*```(?:json)?\s*/i, '').replace(/\s*```\s*$/, '');
  try {
    return JSON.parse(text);
  } catch {
    throw new EngineError(`${what}: the model did not answer with JSON: ${content.slice(0, 200)}`);
  }
}

const EXTRACTION_PROMPT = `You read customer support conversations for a documentation team.
List the problems the customer reports (not the agent). A conversation without a problem has none.
For each problem give: "title" (one short line), "evidence" (exact sentences of the customer, quoted verbatim),
and "impact": "low" (minor friction, users proceed with little or no guidance), "medium" (noticeable friction or partial
blocking, workarounds exist) or "high" (fully or near-fully blocking, severe regression, repeated failures or data-loss
risk, no viable workaround).
Answer with JSON only: {"issues":[{"title":"…","evidence":["…"],"impact":"low|medium|high"}]}`;

const DESCRIBE_PROMPT = `You name groups of similar customer problems for a documentation team.
Answer with JSON only: {"label":"a short name of the problem (at most 8 words)","summary":"two or three sentences: what users struggle with and what the documentation should explain","icon":"one Font Awesome icon name such as gear, lock, credit-card, magnifying-glass, code, cloud, bug"}`;

export function remoteEngine(config: EngineConfig): Engine {
  const chatModel = config.aiModel;
  const embeddingModel = config.aiEmbeddingModel;
  const chat = async (system: string, user: string, what: string) =>
    chatJson(
      await postJson(config, '/chat/completions', {
        model: chatModel,
        temperature: 0,
        response_format: { type: 'json_object' },
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
      }),
      what,
    );
  return {
    vectorKind: embeddingModel ? `embedding:${embeddingModel}` : 'tfidf',
    extract: chatModel
      ? async (conversation) => {
          const transcript = [`Subject: ${conversation.subject}`, ...conversation.parts.map((p) => `${p.role}: ${p.body}`)].join('\n\n');
          const answer = await chat(EXTRACTION_PROMPT, transcript, 'extraction');
          if (!Array.isArray(answer?.issues)) throw new EngineError('extraction: the model answer has no "issues" array');
          return answer.issues
            .filter((i: any) => i && typeof i.title === 'string' && i.title.trim())
            .slice(0, 10)
            .map((i: any): ExtractedIssue => {
              const evidence = (Array.isArray(i.evidence) ? i.evidence : []).filter((e: unknown): e is string => typeof e === 'string' && e.trim() !== '').slice(0, 4);
              const impact: Impact = IMPACTS.includes(i.impact) ? i.impact : 'medium';
              const title = titleOf(String(i.title));
              return { title, evidence, impact, text: [title, ...evidence].join('\n') };
            });
        }
      : builtInEngine.extract,
    ...(embeddingModel
      ? {
          embed: (texts: string[]) => embedTexts(config, texts),
        }
      : {}),
    ...(chatModel
      ? {
          describe: async (sample: ClusterSample) => {
            const text = [
              `Keywords: ${sample.keywords.join(', ')}`,
              'Issue titles:',
              ...sample.titles.map((t) => `- ${t}`),
              'Quotes:',
              ...sample.evidence.map((e) => `> ${e}`),
            ].join('\n');
            const answer = await chat(DESCRIBE_PROMPT, text, 'cluster description');
            if (typeof answer?.label !== 'string' || !answer.label.trim()) return undefined;
            return {
              label: answer.label.trim().slice(0, 120),
              summary: typeof answer.summary === 'string' ? answer.summary.trim().slice(0, 2000) : '',
              icon: typeof answer.icon === 'string' && /^[a-z0-9-]{1,40}$/.test(answer.icon) ? answer.icon : undefined,
            };
          },
        }
      : {}),
  };
}

export function engineFor(config: EngineConfig): Engine {
  return config.aiEngineUrl && (config.aiModel || config.aiEmbeddingModel) ? remoteEngine(config) : builtInEngine;
}
