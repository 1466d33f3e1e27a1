import { cardLinkLabel, mentionLabel } from './serialize-inline.ts';
import { decodeEntities } from './tags.ts';

/**
 * A mention, and a card's link, hold no text in the document: the official `inline-mention` and a
 * `content-ref` cell are a reference alone, and the writer labels them from their target. GitBook's
 * exports label a mention of a page outside the repository (`https://app.gitbook.com/s/…`) with that
 * page's title, which GitBook reads from the other space and Folio cannot. So that an edit through
 * the document API does not rewrite those labels, the written page takes the text the page had
 * before for the same target, where the writer would otherwise derive one.
 */

/** `[text](target "mention")`, the target bare or in `<…>`. */
const MENTION = /\[((?:[^\]\n\\]|\\.)*)\]\((<[^>\n]*>|[^)\s]+) "mention"\)/g;
/** A card's link: an HTML link that is the whole of a table cell. */
const CARD_LINK = /<td><a href="([^"]+)">([^<]*)<\/a><\/td>/g;

const ABSOLUTE = /^[a-z][a-z0-9+.-]*:/i;


const bare = (target: string) => (target.startsWith('<') ? target.slice(1, -1) : target);
/** Whether a written label is the derived one (the writer escapes markdown and HTML in it). */
const isMentionLabel = (text: string, url: string) => text.replace(/\\(.)/g, '$1') === mentionLabel(url);
const isCardLabel = (text: string, url: string) => decodeEntities(text) === cardLinkLabel(decodeEntities(url));

/** target → the text it was given, for texts the writer would not derive; a target given two texts is left out. */
function givenTexts(markdown: string, pattern: RegExp, derived: (text: string, target: string) => boolean, textOf: (m: RegExpMatchArray) => [string, string]): Map<string, string | null> {
  const texts = new Map<string, string | null>();
  for (const match of markdown.matchAll(pattern)) {
    const [target, text] = textOf(match);
    // Links inside the space are labelled from their target as it is now (a renamed page's new name).
    if (!ABSOLUTE.test(target) || derived(text, target)) continue;
    const known = texts.get(target);
    texts.set(target, known === undefined || known === text ? text : null);
  }
  return texts;
}

/** `next` (a page just written from its document) with the mention and card texts `previous` gave the same targets. */
export function keepMentionText(next: string, previous: string | undefined): string {
  if (!previous || (!previous.includes('"mention")') && !previous.includes('<td><a href='))) return next;
  const mentions = givenTexts(previous, MENTION, isMentionLabel, (m) => [bare(m[2]!), m[1]!]);
  const cards = givenTexts(previous, CARD_LINK, isCardLabel, (m) => [m[1]!, m[2]!]);
  return next
    .replace(MENTION, (whole, text: string, target: string) => {
      const url = bare(target);
      const given = mentions.get(url);
      return given && isMentionLabel(text, url) ? `[${given}](${target} "mention")` : whole;
    })
    .replace(CARD_LINK, (whole, url: string, text: string) => {
      const given = cards.get(url);
      return given && isCardLabel(text, url) ? `<td><a href="${url}">${given}</a></td>` : whole;
    });
}
