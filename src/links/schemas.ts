import { Type } from '@sinclair/typebox';
import { ListOf, PageQuery } from '../platform/paging.ts';

export const SpaceParams = Type.Object({ spaceId: Type.String({ maxLength: 100 }) });
export const PageParams = Type.Object({ spaceId: Type.String({ maxLength: 100 }), pageId: Type.String({ maxLength: 100 }) });
export const FileParams = Type.Object({ spaceId: Type.String({ maxLength: 100 }), fileId: Type.String({ maxLength: 100 }) });

export const LinkStatus = Type.Union([Type.Literal('ok'), Type.Literal('broken'), Type.Literal('in-app')], {
  description: '`ok`: the target exists (or is an external URL); `broken`: the page, anchor or file is missing; `in-app`: a URL pointing inside the app.',
});

export const LinkQuery = Type.Object({ ...PageQuery, status: Type.Optional(LinkStatus) });
export const BacklinkQuery = Type.Object({ ...PageQuery });

/** Where a link is (or which page references a file). */
export const PageSummary = Type.Object({
  /** Page id. */
  id: Type.String(),
  /** Page title. */
  title: Type.String(),
  /** Page path (slugs joined by /). */
  path: Type.String(),
});

/** What a link points at: a content reference (`page`, `anchor`, `file`) or an external `url`. */
export const TargetReference = Type.Object({
  /** `page`, `anchor`, `file` or `url`. */
  kind: Type.String(),
  /** Target page id (kinds `page` and `anchor`). */
  page: Type.Optional(Type.String()),
  /** Heading anchor in the target page (kind `anchor`). */
  anchor: Type.Optional(Type.String()),
  /** Target file id (kind `file`). */
  file: Type.Optional(Type.String()),
  /** Space holding the target (content references). */
  space: Type.Optional(Type.String()),
  /** The URL (kind `url`). */
  url: Type.Optional(Type.String()),
});

export const LinkItem = Type.Object({
  /** Whether the target exists in the revision. */
  status: LinkStatus,
  /** How the page relates to the target. */
  relation: Type.Literal('reference'),
  /** The link as written in the page. */
  url: Type.String(),
  /** Organization of the space holding the link. */
  organization: Type.String(),
  /** Space holding the link. */
  space: Type.String(),
  /** Page holding the link. */
  page: PageSummary,
  targetReference: TargetReference,
});

export const LinkStats = Type.Object({
  /** Every link of the listing's scope (the space, or the page), whatever the status filter. */
  total: Type.Integer(),
  broken: Type.Object({
    /** Broken links in the current revision. */
    total: Type.Integer(),
    /** Broken links in the pages changed by open change requests, counted in their heads. */
    changeRequest: Type.Integer(),
  }),
});

export const LinkListing = ListOf(LinkItem, { stats: LinkStats });

export const Backlink = Type.Object({
  kind: Type.Literal('page'),
  /** Organization of the space. */
  organization: Type.String(),
  /** Space of the referencing page. */
  space: Type.String(),
  /** The revision the page was found in. */
  versionContext: Type.Object({ type: Type.Literal('revision'), revision: Type.String() }),
  /** The referencing page. */
  page: PageSummary,
  /** The referenced file id. */
  file: Type.String(),
});

export const BacklinkListing = ListOf(Backlink);
