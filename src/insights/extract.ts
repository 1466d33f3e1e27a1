import type { Impact } from '../platform/db/schema.ts';
import { sentences } from './text.ts';

/**
 * Built-in extraction: which sentences of the customer's messages report a problem, grouped into
 * issues, with an impact by the spec's definitions:
 *
 * - high: fully or near-fully blocking, severe regression, repeated failures, data-loss risk, no
 *   viable workaround;
 * - medium: noticeable friction or partial blocking, workarounds exist;
 * - low: minor friction, users proceed with little or no guidance (how-to questions, unclear docs).
 *
 * Cues are phrase patterns matched on each sentence after removing what says a problem is absent
 * ("no issues", "works fine now", "that fixed it"). Only the customer's messages (role `user`) are
 * read: an agent's answer quoting an error is not the customer's problem.
 */

export interface Message {
  role: string;
  body: string;
}

export interface ConversationText {
  subject: string;
  parts: Message[];
}

export interface ExtractedIssue {
  title: string;
  /** Sentences of the conversation quoted as evidence. */
  evidence: string[];
  impact: Impact;
  /** What the issue is about, for vectors: the evidence and the subject. */
  text: string;
}

const HIGH = [
  /\bdata[- ]loss\b/, /\blost (all|my|our|the|every)\b/, /\b(wiped|vanished|disappeared|gone missing)\b/, /\bcorrupt(ed|s|ion)?\b/,
  /\bcrash(es|ed|ing)?\b/, /\b(completely|totally|fully) (broken|blocked|stuck|down|unusable)\b/, /\bblock(ed|ing|s)? (us|me|our|the whole|everyone|all)\b/, /\b(am|are|is|were|was|been|i'm|we're) (completely |totally |fully )?blocked\b/,
  /\b(is|are|went|been) down\b/, /\boutage\b/, /\burgent(ly)?\b/, /\bnothing works\b/, /\bno (viable )?workaround\b/, /\b(every single time|every time|always fails|keeps failing)\b/,
  /\bunusable\b/, /\bcan(no|')?t (do|use) anything\b/, /\bproduction\b.*\b(down|broken|fail)/, /\bsecurity\b.*\b(leak|expos|breach)/, /\bemergency\b/,
];

const MEDIUM = [
  /\berrors?\b/, /\bfail(s|ed|ing|ure|ures)?\b/, /\bbroken\b/, /\b(breaks?|broke)\b/, /\birrelevant\b/, /\bmiss(es|ed)\b/, /\b(doesn't|does not|didn't|did not|don't|do not|isn't|is not|aren't|won't|will not|wont|doesnt|dont|isnt) (work|load|open|show|save|sync|appear|update|render|start|connect|send|arrive|match|respond|accept|let|find|import|finish|complete)\w*/,
  /\bnot (working|loading|showing|saving|syncing|appearing|updating|rendering|connecting|arriving|responding)\b/, /\bstopped (working|loading|syncing)\b/,
  /\b(can't|cannot|can not|cant|couldn't|could not|unable to|not able to)\b/, /\bbugs?\b/, /\bstuck\b/, /\btim(e|ed|es) ?out\b/, /\btimeouts?\b/,
  /\bwrong\b/, /\bincorrect(ly)?\b/, /\bmissing\b/, /\bslow(ly|er)?\b/, /\b(401|403|404|409|422|429|500|502|503)\b/, /\bdenied\b/, /\brejected\b/,
  /\binvalid\b/, /\bexpired?\b/, /\bglitch\w*\b/, /\bfreez\w*\b/, /\bhangs?\b/, /\bblank\b/, /\bduplicat(e|ed|es)\b/, /\bnever (arrives?|shows?|loads?|works?|came|comes?|starts?|finish\w*|complet\w*|appears?|receiv\w*)\b/,
  /\b(is|are|was|were|get|gets) not (\w+ed)\b/, /\bdoes nothing\b/, /\breturns? (nothing|no results|an? error)\b/, /\bunauthori[sz]ed\b/, /\bpending for\b/,
  /\bover and over\b/, /\bspin(s|ning)?\b/, /\b(charge|charged|charges|bill|billed)\b.*\b(twice|at the same time|double)\b/, /\bbounc\w*\b/, /\brefuse[ds]?\b/,
  /\bwhat am i doing wrong\b/, /\bworkaround\b/, /\bkeeps? (showing|saying|asking|logging|kicking|redirecting|resetting)\b/, /\b(charged|billed) twice\b/, /\bunexpected\w*\b/,
  // General shapes of a report, whatever the product: a negated action, something that stopped,
  // never happens, keeps happening, is still there, is lost or delayed; an exception or HTTP error.
  /\b(doesn't|does not|didn't|did not|don't|do not|won't|will not|wont|doesnt|dont|can't|cant) (\w+ )?(work|load|open|show|save|sync|appear|update|render|start|connect|send|arrive|match|respond|accept|find|import|finish|complete|go|get|receive|see|apply|print|post|reach|deliver|change|happen|display|count|pay|let|allow|come|recogni[sz]e|validate|verify|seem)\w*/,
  /\bno longer\b/, /\bnever (\w+ed|\w+s|got|came|went|sent|made|had)\b/, /\bnothing (happens|happened|changes|changed|is (saved|sent|shown|created|deleted))\b/, /\bkeeps? (on )?\w+ing\b/, /\bkept \w+ing\b/,
  /\bstill (shows?|showing|has|have|there|visible|active|being|getting|gets|charg\w*|listed|appears?)\b/, /\binstead of\b/, /\b(even though|although)\b/,
  /\b(lost|gone|disappear\w*|vanish\w*|delayed|late|garbled|mangled|unreadable|invisible|overwritten|overwrites?|skips?|skipped|ignor(es|ed|ing))\b/,
  /\b(declined|disabled|locked|throttl\w*|exceed\w*|exception|fatal|crash\w*|reject\w*)\b/, /\b[45]\d\d\b/, /\btoo (slow|long|many|low|high|aggressive|small|big|large)\b/,
  /\bcomplain(s|ed|ing)?\b/, /\b(should not|shouldn't|should have|is supposed to|was supposed to)\b/, /\bnot (recogni[sz]ed|supported|found|received|delivered|applied|allowed|possible)\b/,
  /\b(has|have|had|got|get|gets) no \w+/, /\b(in|to|into) (the )?spam\b/, /\b(dropped|drops|cut (off|in half)|warnings?|twice|sluggish|laggy)\b/,
  /\b(is|are|was|were|be) (not|n't) (possible|allowed|accepted|valid|correct|right|shown|saved|sent|created|deleted|updated|applied|delivered|visible)\b/,
];

const LOW = [
  /\bconfus(ing|ed|es)\b/, /\bunclear\b/, /\bnot sure (how|where|what|why|if)\b/, /\bhow (do|can|should|would) (i|we|you)\b/, /\bwhere (do|can|is|are|should) (i|we|the)\b/,
  /\bhard to (find|understand|follow)\b/, /\btypos?\b/, /\boutdated\b/, /\bis there (a|any) way\b/, /\bany way to\b/, /\b(not|un)documented\b/,
  /\bdocs? (don't|do not|doesn't|does not) (say|explain|mention|cover)\b/, /\bno (docs|documentation|example|examples|guide)\b/, /\bwhy (does|is|do|are)\b/,
  /\b(can't|cannot|couldn't) (find|figure out|tell)\b/, /\bwhat('s| is) the (right|correct|best) way\b/,
  /\bwhen will\b/, /\bhow long (does|will|should)\b/, /\bis there (a|an) (setting|option|limit)\b/, /\b(can|could) you (please )?(raise|reset|fix|resend|reissue|restore|recover|undo)\b/,
];

/**
 * Cues in other languages than English, for the built-in engine to find the problems of
 * conversations written in them: the common words of failure, blocking and loss in French, German,
 * Spanish, Portuguese, Italian and Dutch (whole words: letters on neither side), and in Japanese,
 * Chinese and Korean (written without spaces: anywhere in the sentence). A first set, not a
 * translation of every English cue; the OpenAI-compatible engine reads any language.
 */
const word = (alternatives: string) => new RegExp(`(?<![\\p{L}\\p{N}])(${alternatives})(?![\\p{L}\\p{N}])`, 'u');
const HIGH_OTHER = [
  word("perte de données|plantage|plante|inutilisable|complètement bloqué(e|s|es)?|urgente?|datenverlust|abgestürzt|absturz|stürzt ab|unbenutzbar|dringend|pérdida de datos|se cuelga|inutilizable|perda de dados|trava tudo|perdita di dati|si blocca|gegevensverlies|crasht"),
  /データ(が|を)?(消え|失)|クラッシュ|落ちて|緊急|数据丢失|崩溃|闪退|紧急|데이터 (손실|유실)|충돌|긴급/u,
];
const MEDIUM_OTHER = [
  word("erreurs?|échecs?|échoue(nt)?|a échoué|ne (fonctionne|marche|s'affiche|charge|répond) (pas|plus)|ne peux pas|n'arrive pas|impossible|bug(s|gé|gue)?|bogues?|bloqué(e|s|es)?|manquant(e|s|es)?|introuvable|lent(e|s)?|fehler|fehlgeschlagen|schlägt fehl|funktioniert (nicht|nie)|geht nicht|kaputt|kann (nicht|keine?n?)|hängt|fehlt|langsam|falla(n)?|fallo|no funciona|no (puedo|carga|aparece)|roto|bloqueado|lento|erro(s)?|falha(s)?|não (funciona|consigo|carrega|aparece)|quebrado|travado|errore|non (funziona|riesco|carica)|bloccato|guasto|fout(en)?|werkt niet|kapot|mislukt|kan niet|traag"),
  /エラー|失敗|できません|できない|動かない|動きません|表示されな|表示されません|不具合|バグ|遅い|错误|失败|无法|不能|报错|出错|打不开|异常|卡住|오류|에러|실패|안 ?돼|안 ?됩니다|작동하지|작동 안|안 열/u,
];

/** What says a problem is absent or over; removed before cues are looked for. */
const ABSENCE = [
  /\b(no|without any|without|zero|never had any|not any|haven't had any|never any) (real )?(problems?|issues?|errors?|bugs?|complaints?|trouble|hiccups?|questions?)\b/g,
  /\bnot (a|an) (problem|issue|bug)\b/g, /\bno (worries|rush|hurry)\b/g, /\bnothing (is )?(wrong|broken)\b/g,
  /\b(your|my|the|this) (e-?mail|message) will not be forwarded\b/g, /\bdo not take this the wrong way\b/g,
];

/** A sentence saying the problem went away is not a problem report. */
const RESOLVED = /\b(works? (fine|great|perfectly|well|now|again)|working (fine|great|perfectly|well|now|again)|(is|was|got) (fixed|resolved|solved|sorted)|(that|this|it) (fixed|solved|resolved|did) (it|the trick)|fixed it|solved it|went away|all good now|no longer (an? )?(problem|issue|happens|happening))\b/;

/** Sentences that open another issue in the same message. */
const ANOTHER = /^(also|additionally|another (issue|problem|thing|bug)|separately|on another note|second(ly)?|second (thing|issue|problem)|unrelated(ly)?|one more thing|and another|btw|by the way|p\.? ?s\.?|oh,? and|besides( that)?|and while (i'm|i am) (here|at it))(?![a-z])|^\d{1,2}[.)]\s/i;

/**
 * Lines of a message that are not the customer's own words about the problem: quoted history
 * ("> …"), forwarding and mail headers, legal disclaimers. A signature ("-- ", "Sent from my …")
 * ends what is read of the message.
 */
const QUOTED = /^\s*>/;
const HEADER = /^\s*(from|to|cc|subject|date|sent|von|de|objet|betreff):\s/i;
const FORWARD_RULE = /^\s*-{2,}.*(forwarded|original message|weitergeleitet|transféré).*-*\s*$/i;
const DISCLAIMER = /\b(confidential|intended (solely|only) for|privileged|before printing|received (it|this) in error)\b/i;
const SIGNATURE_START = /^\s*(--\s*|__+|(sent|envoyé|gesendet|enviado) (from|de|von|desde) (my|mon|ma|meinem|mi|outlook|\w+ for)\b.*)$/i;

/** What a customer wrote in a message, without quotes, headers, disclaimers and signature. */
export function ownWords(body: string): string {
  const kept: string[] = [];
  for (const line of body.split('\n')) {
    if (SIGNATURE_START.test(line)) break;
    if (QUOTED.test(line) || HEADER.test(line) || FORWARD_RULE.test(line) || DISCLAIMER.test(line)) continue;
    kept.push(line);
  }
  return kept.join('\n');
}

const GREETING = /^(hi|hello|hey|dear|good (morning|afternoon|evening))\b[^.!?,]*[,.!]?\s*/i;

export function scoreSentence(sentence: string): Impact | undefined {
  let text = sentence.toLowerCase().replace(/[’`]/g, '\'');
  if (RESOLVED.test(text)) return undefined;
  for (const pattern of ABSENCE) text = text.replace(pattern, ' ');
  if (HIGH.some((p) => p.test(text)) || HIGH_OTHER.some((p) => p.test(text))) return 'high';
  if (MEDIUM.some((p) => p.test(text)) || MEDIUM_OTHER.some((p) => p.test(text))) return 'medium';
  if (LOW.some((p) => p.test(text))) return 'low';
  return undefined;
}

const RANK: Record<Impact, number> = { low: 1, medium: 2, high: 3 };

export function strongerImpact(a: Impact | undefined, b: Impact | undefined): Impact | undefined {
  if (!a) return b;
  if (!b) return a;
  return RANK[a] >= RANK[b] ? a : b;
}

/** A sentence as an issue title: no greeting, one line, at most 120 characters cut at a word. */
export function titleOf(sentence: string): string {
  let title = sentence.replace(GREETING, '').replace(/\s+/g, ' ').trim();
  if (!title) title = sentence.trim();
  if (title.length > 120) title = `${title.slice(0, 117).replace(/\s+\S*$/, '')}…`;
  return title.charAt(0).toUpperCase() + title.slice(1);
}

/** Issues reported in a conversation by its customer; none when no sentence reports a problem. */
export function extractIssues(conversation: ConversationText): ExtractedIssue[] {
  const groups: { sentences: { text: string; impact: Impact | undefined }[] }[] = [{ sentences: [] }];
  for (const part of conversation.parts) {
    if (part.role !== 'user') continue;
    for (const sentence of sentences(ownWords(part.body))) {
      const current = groups[groups.length - 1]!;
      const scored = { text: sentence, impact: scoreSentence(sentence) };
      // "Also, …" opens a new issue only when it reports a problem of its own.
      if (ANOTHER.test(sentence.replace(GREETING, '')) && scored.impact && current.sentences.some((s) => s.impact)) {
        groups.push({ sentences: [scored] });
      } else {
        current.sentences.push(scored);
      }
    }
  }
  const issues: ExtractedIssue[] = [];
  for (const group of groups) {
    const evidence = group.sentences.filter((s) => s.impact);
    if (evidence.length === 0) continue;
    let impact: Impact = 'low';
    for (const s of evidence) impact = strongerImpact(impact, s.impact)!;
    // Repeated failures in one report weigh more: several medium cues make a medium issue high
    // only when the customer also says it blocks them (handled by HIGH); otherwise keep the strongest.
    const strongest = evidence.find((s) => s.impact === impact)!;
    const quoted = evidence.slice(0, 4).map((s) => s.text);
    // Neutral sentences next to the evidence carry the topic too ("The export to PDF. It fails.").
    const context = group.sentences.filter((s) => !s.impact).slice(0, 3).map((s) => s.text);
    const isFirst = issues.length === 0;
    issues.push({
      title: titleOf(strongest.text),
      evidence: quoted,
      impact,
      text: [isFirst ? conversation.subject : '', ...evidence.map((s) => s.text), ...context].join('\n'),
    });
  }
  return issues;
}
