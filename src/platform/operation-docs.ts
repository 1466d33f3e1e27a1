import type { RouteOptions } from 'fastify';

/**
 * Summary and description of every operation in `/v1/openapi.json`, keyed by operationId, so the
 * reference at `/docs` reads well without each route file carrying prose. A route's own `summary`
 * or `description` wins over this table. test/operator.test.ts checks that no published operation
 * lacks either.
 */
export const operationDocs: Record<string, readonly [summary: string, description: string]> = {
  // Platform
  checkHealth: ['Liveness check', 'Answers 200 while the process serves HTTP; it does not touch the database. Needs no token and is never rate-limited, so a load balancer may poll it freely.'],
  // Routes without an operationId are keyed by method and path.
  'GET /': ['About this server', 'What this server is and where to go next: the API, its reference at /docs. Needs no token.'],
  checkReadiness: ['Readiness check', 'Answers 200 when the database answers a trivial query and 503 otherwise: take the instance out of rotation while it fails. Needs no token and is never rate-limited.'],

  // Users and tokens
  getAuthenticatedUser: ['Get the calling user', 'The profile of the user the bearer token belongs to.'],
  getUserById: ['Get a user', 'The public profile of a user.'],
  updateUserById: ['Update a user', 'Changes a user\'s profile. Users may only change their own.'],
  listApiTokensOfAuthenticatedUser: ['List my API tokens', 'The live API tokens of the calling user with their names and expiry; `current` marks the token of this request. Token values are never shown again.'],
  createApiTokenForAuthenticatedUser: ['Create an API token', 'Creates a token for the calling user. The token value is in this response only (it is stored as a hash). A token that expires cannot create one that outlives it.'],
  revokeApiTokenOfAuthenticatedUser: ['Revoke an API token', 'Revokes one of the calling user\'s tokens; it stops working at once in this process. Answers 204 also when the token was already gone.'],

  // Organizations
  listOrganizationsForAuthenticatedUser: ['List my organizations', 'The organizations the calling user is a member of, paginated.'],
  createOrganization: ['Create an organization', 'Creates an organization; the caller becomes its first admin.'],
  getOrganizationById: ['Get an organization', 'An organization the caller belongs to. Outsiders get 404, so the organization\'s existence is not revealed.'],
  updateOrganizationById: ['Update an organization', 'Changes the title or other settings of an organization, such as its merge rules. Admins only.'],
  joinOrganization: ['Join through an email domain', 'Joins an organization that accepts members from the caller\'s verified email domain.'],
  getOrganizationsForEmailDomain: ['Find organizations by email domain', 'Organizations that let users of this email domain join, among those the caller may discover.'],
  updateOrganizationMemberLastSeenAt: ['Record activity in an organization', 'Marks the caller as seen now and returns signed visitor claims (a JWT) for the organization\'s published content.'],
  getOrganizationAgentInstructions: ['Get agent instructions', 'The instructions an organization gives to its documentation agent.'],
  updateOrganizationAgentInstructions: ['Set agent instructions', 'Replaces the instructions an organization gives to its documentation agent. Admins only.'],

  // Members
  listMembersInOrganizationById: ['List members', 'Members of an organization with their roles, filterable by role and by name or email. Guests may not list members.'],
  getMemberInOrganizationById: ['Get a member', 'One member of an organization with their role.'],
  updateMemberInOrganizationById: ['Change a member\'s role', 'Sets a member\'s role (or makes them a guest). Admins only; the last admin cannot be demoted.'],
  removeMemberFromOrganizationById: ['Remove a member', 'Removes a member from the organization, or lets a member leave. The last admin cannot be removed.'],
  setUserAsSSOMemberForOrganization: ['Mark a member as SSO', 'Records that a member signs in through the organization\'s single sign-on.'],
  listSpacesForOrganizationMember: ['List a member\'s spaces', 'The spaces a member of the organization can access, with their effective permission in each.'],
  listTeamsForOrganizationMember: ['List a member\'s teams', 'The teams of the organization a member belongs to.'],

  // Teams
  listTeamsInOrganizationById: ['List teams', 'Teams of an organization, paginated. Guests may not list teams.'],
  createOrganizationTeam: ['Create a team', 'Creates a team in the organization, optionally with its first members. Admins only.'],
  getTeamInOrganizationById: ['Get a team', 'One team of the organization.'],
  updateTeamInOrganizationById: ['Rename a team', 'Changes a team\'s title. Admins only.'],
  removeTeamFromOrganizationById: ['Delete a team', 'Deletes a team and the access it granted. Admins only.'],
  updateMembersInOrganizationTeam: ['Add and remove team members', 'Adds and removes several members of a team in one call. Admins and the team\'s owners.'],
  listTeamMembersInOrganizationById: ['List team members', 'Members of a team with their team role.'],
  addMemberToOrganizationTeamById: ['Add a team member', 'Adds a member to a team, or changes their team role. Admins and the team\'s owners.'],
  deleteMemberFromOrganizationTeamById: ['Remove a team member', 'Removes a member from a team. Admins and the team\'s owners.'],

  // Invites
  listOrganizationInviteLinks: ['List invite links', 'The invite links of an organization with the role each grants. Admins only.'],
  createOrganizationInvite: ['Create an invite link', 'Creates a link that lets whoever holds it join the organization with a given role. Admins only.'],
  getOrganizationInviteLink: ['Get an invite link', 'One invite link of the organization. Admins only.'],
  updateOrganizationInviteById: ['Update an invite link', 'Changes the role an invite link grants. Admins only.'],
  deleteOrganizationInviteById: ['Delete an invite link', 'Disables an invite link; nobody can join with it any more. Admins only.'],
  joinOrganizationWithInvite: ['Join with an invite', 'Joins the organization through an invite link, with the role the link grants.'],
  inviteUsersToOrganization: ['Invite people by email', 'Invites people to the organization by email address with a role; existing users become members at once. Admins only.'],

  // Collections
  listCollectionsInOrganizationById: ['List collections', 'Collections of an organization the caller can see, in their order; `nested=false` lists the top level only.'],
  createCollection: ['Create a collection', 'Creates a collection at the top of the organization or inside another collection.'],
  getCollectionById: ['Get a collection', 'One collection the caller can see.'],
  updateCollectionById: ['Update a collection', 'Changes a collection\'s title, description or other settings.'],
  deleteCollectionById: ['Delete a collection', 'Deletes a collection with the collections and spaces inside it. Answers 204 also when it was already gone.'],
  listSpacesInCollectionById: ['List a collection\'s spaces', 'Spaces directly inside a collection that the caller can see, in their order.'],
  moveCollection: ['Move a collection', 'Moves a collection under another parent or to another position among its siblings.'],
  transferCollection: ['Transfer a collection', 'Moves a collection, with everything inside it, to another organization where the caller may create content.'],

  // Spaces
  listSpacesInOrganizationById: ['List spaces', 'Spaces of an organization the caller can see, paginated.'],
  createSpace: ['Create a space', 'Creates an empty space in the organization or in one of its collections.'],
  getSpaceById: ['Get a space', 'A space\'s metadata, URLs and the caller\'s permissions on it.'],
  updateSpaceById: ['Update a space', 'Changes a space\'s title, visibility or other settings. Page content changes go through change requests.'],
  deleteSpaceById: ['Delete a space', 'Moves a space to the trash; it can be restored until the retention period (SPACE_RETENTION_MS) ends, then a background job removes it.'],
  restoreSpace: ['Restore a deleted space', 'Brings back a space deleted within the retention period.'],
  duplicateSpace: ['Duplicate a space', 'Creates a copy of a space next to it, with all its pages and files.'],
  moveSpace: ['Move a space', 'Moves a space to another collection or position.'],
  transferSpace: ['Transfer a space', 'Moves a space to another organization where the caller may create content.'],

  // Permissions
  inviteToSpace: ['Grant access to a space', 'Gives users or teams a permission level on a space.'],
  listUserPermissionsInSpace: ['List user permissions of a space', 'Users with a direct grant on a space and their level.'],
  listTeamPermissionsInSpace: ['List team permissions of a space', 'Teams with a grant on a space and their level.'],
  listPermissionsAggregateInSpace: ['List everyone with access to a space', 'Every user who can access a space and their effective level, from roles, teams, collections and direct grants.'],
  updateUserPermissionInSpace: ['Change a user\'s access to a space', 'Sets the permission level of a user\'s direct grant on a space.'],
  removeUserFromSpace: ['Remove a user\'s access to a space', 'Deletes a user\'s direct grant on a space; access through roles or teams remains.'],
  updateTeamPermissionInSpace: ['Change a team\'s access to a space', 'Sets the permission level a team has on a space.'],
  removeTeamFromSpace: ['Remove a team\'s access to a space', 'Deletes a team\'s grant on a space.'],
  inviteToCollection: ['Grant access to a collection', 'Gives users or teams a permission level on a collection and everything inside it.'],
  listUserPermissionsInCollection: ['List user permissions of a collection', 'Users with a direct grant on a collection and their level.'],
  listTeamPermissionsInCollection: ['List team permissions of a collection', 'Teams with a grant on a collection and their level.'],
  listPermissionsAggregateInCollection: ['List everyone with access to a collection', 'Every user who can access a collection and their effective level.'],
  updateUserPermissionInCollection: ['Change a user\'s access to a collection', 'Sets the permission level of a user\'s direct grant on a collection.'],
  removeUserFromCollection: ['Remove a user\'s access to a collection', 'Deletes a user\'s direct grant on a collection.'],
  updateTeamPermissionInCollection: ['Change a team\'s access to a collection', 'Sets the permission level a team has on a collection.'],
  removeTeamFromCollection: ['Remove a team\'s access to a collection', 'Deletes a team\'s grant on a collection.'],

  // Content of a space
  getCurrentRevision: ['Get the live revision', 'The revision a space currently shows: its page tree and files.'],
  listPages: ['List pages', 'The page tree of the live revision of a space.'],
  getPageById: ['Get a page', 'A page of the live revision, as markdown or as a JSON document (`format`).'],
  getPageByPath: ['Get a page by path', 'A page of the live revision found by its path (slugs joined by `/`).'],
  listFiles: ['List files', 'Files (images, attachments) of the live revision of a space, paginated.'],
  getFileById: ['Get a file', 'A file of the live revision with its download URL.'],
  getRevisionById: ['Get a revision', 'A past or current revision of a space: its page tree and files.'],
  listPagesInRevisionById: ['List pages of a revision', 'The page tree of a given revision.'],
  getPageInRevisionById: ['Get a page of a revision', 'A page as it was in a given revision.'],
  getPageInRevisionByPath: ['Get a page of a revision by path', 'A page of a given revision found by its path.'],
  listFilesInRevisionById: ['List files of a revision', 'Files of a given revision, paginated.'],
  getFileInRevisionById: ['Get a file of a revision', 'A file as it was in a given revision.'],
  getPageDocumentById: ['Get a page\'s document', 'The body of a page of the live revision alone, as a JSON document; `dereferenced` expands reusable contents, `evaluated` resolves variables.'],
  getPageDocumentInRevisionById: ['Get a page\'s document in a revision', 'The body of a page as it was in a given revision, as a JSON document.'],
  getPageDocumentInChangeRequestById: ['Get a page\'s document in a change request', 'The body of a page as it is in a change request, as a JSON document.'],
  getReusableContentById: ['Get a reusable content', 'A block of content shared by pages (`{% include %}`) in the live revision: its title and the id of its document.'],
  getReusableContentInRevisionById: ['Get a reusable content of a revision', 'A reusable content as it was in a given revision.'],
  getReusableContentInChangeRequestById: ['Get a reusable content of a change request', 'A reusable content as it is in a change request.'],
  getReusableContentDocumentById: ['Get a reusable content\'s document', 'The body of a reusable content of the live revision, as a JSON document.'],
  getReusableContentDocumentInRevisionById: ['Get a reusable content\'s document in a revision', 'The body of a reusable content as it was in a given revision, as a JSON document.'],
  getReusableContentDocumentInChangeRequestById: ['Get a reusable content\'s document in a change request', 'The body of a reusable content as it is in a change request, as a JSON document.'],
  getDocumentById: ['Get a document', 'A stored document (the `documentId` of a page or the `document` of a reusable content) of this space, as a JSON document.'],
  getComputedDocument: ['Compute a document', 'Computes a document from a content source (OpenAPI, translation, integration). Folio has no computed sources yet: every source type is answered with a 400 saying so.'],
  applyTemplateToSpace: ['Apply a template', 'Fills a space with the pages of a built-in template (getting started, API reference, changelog).'],

  // Content of a change request
  getRevisionOfChangeRequestById: ['Get a change request\'s revision', 'The latest revision of a change request: its page tree and files.'],
  updateChangeRequestContent: ['Edit a change request', 'Applies a batch of edits (insert, update, delete or revert pages, insert files, set variables, insert, update or delete reusable contents) to a change request as one new revision; the whole batch fails if one edit is invalid.'],
  listPagesInChangeRequest: ['List pages of a change request', 'The page tree of a change request\'s latest revision.'],
  getPageInChangeRequestById: ['Get a page of a change request', 'A page as it is in a change request.'],
  getPageInChangeRequestByPath: ['Get a page of a change request by path', 'A page of a change request found by its path.'],
  listFilesInChangeRequestById: ['List files of a change request', 'Files of a change request\'s latest revision, paginated.'],
  getFileInChangeRequestById: ['Get a file of a change request', 'A file as it is in a change request.'],

  // Change requests
  createChangeRequest: ['Open a change request', 'Starts a change request: a draft copy of the space\'s content that can be edited, reviewed and merged.'],
  listChangeRequestsForSpace: ['List change requests of a space', 'Change requests of a space, open ones by default (`status` selects others).'],
  listChangeRequestsForOrganization: ['List change requests of an organization', 'Change requests across the spaces of an organization that the caller can see.'],
  getChangeRequestById: ['Get a change request', 'A change request with its status, subject, author and revisions.'],
  updateChangeRequestById: ['Update a change request', 'Changes a change request\'s subject, description or status (archive, reopen).'],
  mergeChangeRequest: ['Merge a change request', 'Merges a change request into the live content with a three-way merge. Refused with the conflicting pages while conflicts remain or merge rules are not met.'],
  updateChangeRequest: ['Bring a change request up to date', 'Merges the space\'s latest content into a change request; lines changed on both sides are left with conflict markers to edit.'],
  getChangeRequestChanges: ['List changes of a change request', 'Pages and files added, edited, moved or removed by a change request compared with its base.'],
  getReviewsByChangeRequestId: ['List reviews', 'Reviews submitted on a change request.'],
  submitChangeRequestReview: ['Review a change request', 'Approves a change request or asks for changes.'],
  getChangeRequestReviewById: ['Get a review', 'One review of a change request.'],
  getRequestedReviewersByChangeRequestId: ['List requested reviewers', 'Users asked to review a change request.'],
  requestReviewersForChangeRequest: ['Request reviewers', 'Asks users to review a change request.'],
  removeRequestedReviewerFromChangeRequest: ['Withdraw a review request', 'Removes a user from the requested reviewers of a change request.'],
  getChangeRequestPDF: ['Print a change request to PDF', 'A temporary link to a PDF of the change request\'s pages.'],

  // Comments
  listCommentsInSpace: ['List comments of a space', 'Top-level comments on a space and its pages, paginated.'],
  postCommentInSpace: ['Comment on a space', 'Posts a comment on a space, optionally on one of its pages.'],
  getCommentInSpace: ['Get a comment', 'One comment of a space.'],
  updateCommentInSpace: ['Edit or resolve a comment', 'Changes a comment\'s body or resolves it. The body only by its author.'],
  deleteCommentInSpace: ['Delete a comment', 'Deletes a comment and its replies. Its author or a space admin.'],
  listCommentRepliesInSpace: ['List replies', 'Replies to a comment of a space.'],
  postCommentReplyInSpace: ['Reply to a comment', 'Posts a reply to a comment of a space.'],
  getCommentReplyInSpace: ['Get a reply', 'One reply to a comment of a space.'],
  updateCommentReplyInSpace: ['Edit a reply', 'Changes the body of a reply. Its author only.'],
  deleteCommentReplyInSpace: ['Delete a reply', 'Deletes a reply to a comment of a space.'],
  listCommentsInChangeRequest: ['List comments of a change request', 'Top-level comments in a change request, paginated.'],
  postCommentInChangeRequest: ['Comment on a change request', 'Posts a comment in a change request, optionally on one of its pages.'],
  getCommentInChangeRequest: ['Get a change request comment', 'One comment of a change request.'],
  updateCommentInChangeRequest: ['Edit or resolve a change request comment', 'Changes a change request comment\'s body or resolves it.'],
  deleteCommentInChangeRequest: ['Delete a change request comment', 'Deletes a comment of a change request and its replies.'],
  listCommentRepliesInChangeRequest: ['List replies in a change request', 'Replies to a comment of a change request.'],
  postCommentReplyInChangeRequest: ['Reply in a change request', 'Posts a reply to a comment of a change request.'],
  getCommentReplyInChangeRequest: ['Get a change request reply', 'One reply to a comment of a change request.'],
  updateCommentReplyInChangeRequest: ['Edit a change request reply', 'Changes the body of a reply in a change request. Its author only.'],
  deleteCommentReplyInChangeRequest: ['Delete a change request reply', 'Deletes a reply to a comment of a change request.'],

  // Search and links
  searchSpaceContent: ['Search a space', 'Full-text search of the live pages of a space, with the matching sections.'],
  searchOrganizationContent: ['Search an organization', 'Full-text search across the spaces of an organization that the caller can read.'],
  listSpaceLinks: ['List links of a space', 'Links found in the live pages of a space, with their status (ok, broken, in-app).'],
  listPageLinks: ['List links of a page', 'Links found in one live page, with their status.'],
  listFileBacklinks: ['List pages using a file', 'The live pages that reference a file.'],
  // Integrations
  listIntegrations: ['List integrations', 'Public integrations and those of the caller\'s organizations, filtered by name search, category, block domain, blocks, content sources, owner, scope and target.'],
  listOrganizationIntegrations: ['List integrations installed in an organization', 'Integrations with an installation in the organization, with the same filters as the integration list. Members with a role.'],
  listOrganizationInstallations: ['List installations of an organization', 'The organization\'s installations, each with its integration. Members with a role.'],
  listSpaceIntegrations: ['List integrations of a space', 'Integrations installed on the space, directly or through an installation covering all spaces.'],
  getIntegrationByName: ['Get an integration', 'An integration by name. Private integrations are visible to their organization only.'],
  publishIntegration: ['Publish an integration', 'Creates the integration (owned by `organization`, id or subdomain) or publishes a new version of it. Admins of the owning organization. Secrets are stored encrypted and never returned; icon and preview images are checked (PNG, JPEG, GIF; size limits).'],
  unpublishIntegration: ['Unpublish an integration', 'Removes the integration with its installations and events. Admins of the owning organization.'],
  listIntegrationInstallations: ['List installations of an integration', 'All installations for admins of the owning organization and the integration\'s own tokens; otherwise those of organizations the caller administers.'],
  installIntegration: ['Install an integration', 'Installs the integration in an organization (its admins). The installation is pending until its required configuration is set; the integration receives installation_setup.'],
  getIntegrationInstallationById: ['Get an installation', 'One installation of the integration.'],
  updateIntegrationInstallation: ['Update an installation', 'Changes the configuration (checked against the integration\'s account configuration schema), external ids or space selection. Status follows the configuration (pending until complete). Admins of the organization.'],
  uninstallIntegration: ['Uninstall an integration', 'Removes the installation, its space installations and tokens; the integration receives space_installation_deleted and installation_deleted.'],
  createIntegrationInstallationToken: ['Create an installation token', 'A short-lived token carrying exactly the integration\'s scopes on exactly the installation\'s spaces. For the integration itself or admins of its organization.'],
  listIntegrationInstallationSpaces: ['List space installations of an installation', 'Spaces the installation is installed on (ids, or space objects with `extended`).'],
  installIntegrationOnSpace: ['Install on a space', 'Installs the integration on a space of the installation\'s organization (space admins). The integration receives space_installation_setup.'],
  getIntegrationSpaceInstallation: ['Get a space installation', 'The installation of the integration on one space.'],
  updateIntegrationSpaceInstallation: ['Update a space installation', 'Changes the space configuration (checked against the integration\'s space configuration schema) or external ids.'],
  uninstallIntegrationFromSpace: ['Uninstall from a space', 'Removes the integration from one space; it receives space_installation_deleted.'],
  listIntegrationSpaceInstallations: ['List space installations of an integration', 'Space installations across the installations the caller may read.'],
  setIntegrationDevelopmentMode: ['Start development mode', 'Sends the integration\'s events to `tunnelUrl` instead of its published script, signed with the x-folio-signature header (t=<seconds>,v1=<HMAC-SHA256 of "<t>.<body>"> with the integration\'s signing secret).'],
  disableIntegrationDevelopmentMode: ['Stop development mode', 'Events go to the published script again.'],
  listIntegrationEvents: ['List events of an integration', 'Events delivered to the integration (success or failed), newest first. Admins of the owning organization and the integration\'s tokens.'],
  listSiteIntegrations: ['List integrations of a site', 'Integrations installed on the site, directly or through an installation covering all sites. Members of the organization.'],
  listIntegrationInstallationSites: ['List site installations of an installation', 'Sites the installation is installed on (ids, or site objects with `extended`).'],
  installIntegrationOnSite: ['Install on a site', 'Installs the integration on a site of the installation\'s organization (its admins). The integration receives site_installation_setup.'],
  getIntegrationSiteInstallation: ['Get a site installation', 'The installation of the integration on one site.'],
  updateIntegrationSiteInstallation: ['Update a site installation', 'Changes the site configuration (checked against the integration\'s site configuration schema) or external ids.'],
  uninstallIntegrationFromSite: ['Uninstall from a site', 'Removes the integration from one site; it receives site_installation_deleted.'],
  listIntegrationSiteInstallations: ['List site installations of an integration', 'Site installations across the installations the caller may read.'],
  getIntegrationEvent: ['Get an event with its trace', 'One event with the log lines of its deliveries: what the script printed, and Folio\'s own lines.'],

  // Sites
  listSites: ['List sites', 'Docs sites of an organization, filterable by a space they contain, by title, by published status and by type. Members with a role.'],
  createSite: ['Create a site', 'Creates a docs site (type basic by default) with a basename derived from its title, unique in the organization, and optionally its first spaces. Admins only.'],
  getSiteById: ['Get a site', 'One docs site with its settings, permissions and URLs.'],
  updateSiteById: ['Update a site', 'Changes title, default section or site space (members with create), or visibility, basename, hostname (unique across the server: 409 when taken), proxy (null removes it), adaptive content and agents context (admins).'],
  deleteSiteById: ['Delete a site', 'Deletes a site with its structure, share links and redirects; the spaces themselves stay. Admins only; 204 also when it did not exist.'],
  publishSite: ['Publish a site', 'Makes the site live for the audience of its visibility. The site needs at least one space. Admins only.'],
  unpublishSite: ['Unpublish a site', 'Takes the site offline; its settings and structure are kept. Admins only.'],
  getPublishedContentSite: ['Get a published site', 'The site as its audience sees it: the site, its structure, customizations (site and per site space) and integration scripts. Members, or anyone while it is published and public or unlisted, or with an active share key.'],
  getSiteAdaptiveSchema: ['Get the adaptive schema', 'The JSON Schema of the visitor claims used by adaptive content conditions.'],
  updateSiteAdaptiveSchema: ['Set the adaptive schema', 'Replaces the visitor-claims schema: draft-07, boolean claims with descriptions, a nested unsigned object, additionalProperties false; anything else is a 400 saying what to change. Admins only.'],
  listSiteAdaptiveTemplateConditions: ['List template conditions', 'One suggested condition per claim of the adaptive schema, such as visitor.claims.unsigned.isBetaUser.'],
  getSiteStructure: ['Get the structure of a site', 'Sections and section groups nested as shown to visitors, or the site spaces of a site without sections, in order.'],
  sortSiteStructure: ['Reorder the structure', 'Moves a site space, section or section group before or after a sibling (a section or group may move into the group of that sibling; never into itself). Ids of other sites are a 400.'],
  listSiteSpaces: ['List site spaces', 'The spaces linked to a site, with their paths, sections and defaults; default=true or false filters on the default flag.'],
  addSpaceToSite: ['Add a space to a site', 'Links a space of the organization to the site at a unique path, in the given section, else the default section, else the root; the first of its container becomes the default.'],
  updateSiteSpaceById: ['Update a site space', 'Changes the path (unique in its section), condition (null removes it), hidden flag or linked space of a site space.'],
  deleteSiteSpaceById: ['Remove a space from a site', 'Unlinks the space; when it was the default of its container another becomes default.'],
  moveSiteSpace: ['Move a site space (deprecated)', 'Moves a site space before or after another of the same section; use sortSiteStructure.'],
  getSiteCustomizationById: ['Get site customization', 'The complete customization settings of the site: the owner\'s settings over the defaults.'],
  updateSiteCustomizationById: ['Set site customization', 'Replaces the customization settings of the site; keys left out fall back to the defaults. Members with create.'],
  getSiteSpaceCustomizationById: ['Get site space customization', 'The site\'s customization with the site space\'s overrides applied.'],
  overrideSiteSpaceCustomizationById: ['Override customization for a site space', 'Merges overrides into those of the site space; null resets a key to the site\'s value.'],
  deleteSiteSpaceCustomizationById: ['Reset site space customization', 'Removes every override of the site space.'],
  listSiteSections: ['List sections', 'Sections of a site with their site spaces.'],
  addSectionToSite: ['Add a section', 'Creates a section with a space as its first variant. The first section of a site takes the site spaces that were at its root and becomes the default.'],
  updateSiteSectionById: ['Update a section', 'Changes title, path (unique in the site), default site space, condition, icon, description or group of a section.'],
  deleteSiteSectionById: ['Delete a section', 'Deletes a section and its site spaces; when it was the default another section becomes default.'],
  moveSiteSection: ['Move a section (deprecated)', 'Moves a section before or after another; use sortSiteStructure.'],
  listSiteSectionGroups: ['List section groups', 'Section groups of a site with their nested children.'],
  addSectionGroupToSite: ['Add a section group', 'Creates a group at the root or inside a parent group, optionally taking sections.'],
  updateSiteSectionGroupById: ['Update a section group', 'Changes the title or icon of a group, or moves it under another group (never under itself: 400).'],
  deleteSiteSectionGroupById: ['Delete a section group', 'Deletes a group; its sections and groups move up to its parent.'],
  addSectionToSiteSectionGroup: ['Put a section in a group', 'Moves a section of the site into the group, last.'],
  removeSectionFromSiteSectionGroup: ['Take a section out of a group', 'Moves the section to the group\'s parent, right after the group.'],
  moveSiteSectionGroup: ['Move a section group (deprecated)', 'Moves a group before or after a section or group; use sortSiteStructure.'],
  listSiteShareLinks: ['List share links', 'Share links of a site, with their URLs while the site is published. Admins only.'],
  createSiteShareLink: ['Create a share link', 'Creates a secret link (192 random bits) that lets anyone holding it read a published share-link site. Admins only.'],
  updateSiteShareLinkById: ['Update a share link', 'Renames a share link or turns it off (active false) or on again. Admins only.'],
  deleteSiteShareLinkById: ['Delete a share link', 'Revokes a share link for good. Admins only.'],
  listSiteRedirects: ['List redirects', 'Live (or draft) redirects of a site, newest first, by last update, or by source.'],
  createSiteRedirect: ['Create a redirect', 'Redirects a path (or a prefix ending in *) to a section, site space, page or external URL. 409 when the source already redirects.'],
  bulkUpsertSiteRedirects: ['Create, update or delete redirects', 'Applies up to 500 redirect changes in one transaction: upserts, deletions (destination null) and publication of drafts.'],
  updateSiteRedirectById: ['Update a redirect', 'Changes the source, destination or flags of a redirect.'],
  deleteSiteRedirectById: ['Delete a redirect', 'Removes a redirect; 204 also when it did not exist.'],
  getSiteRedirectBySource: ['Resolve a redirect', 'The live redirect that applies to a path (exact first, else the longest wildcard) and the URL it leads to.'],
  getSitePublishingAuthById: ['Get visitor authentication', 'The key that signs visitor JWTs (HS256) of a visitor-auth site, and its fallback and logout URLs. Admins only.'],
  updateSitePublishingAuthById: ['Update visitor authentication', 'Changes the backend and the fallback and logout URLs (null removes one). Admins only.'],
  regenerateSitePublishingAuthById: ['Regenerate the visitor key', 'Replaces the signing key: visitor tokens signed with the old key stop working at once. Admins only.'],
  searchSiteContent: ['Search a site', 'Full-text search of the spaces of a site: the default content of each section, some site spaces, or all of them.'],
};

/** onRoute hook: fills a route's `summary` and `description` from the table (the route's own win). */
export function applyOperationDocs(route: RouteOptions): void {
  type Docs = { operationId?: string; summary?: string; description?: string; hide?: boolean };
  const own = route.schema as Docs | undefined;
  const docs = own?.operationId
    ? operationDocs[own.operationId]
    : typeof route.method === 'string' ? operationDocs[`${route.method} ${route.url}`] : undefined;
  if (!docs || own?.hide) return;
  const schema: Docs = own ?? {};
  route.schema = schema as RouteOptions['schema'];
  schema.summary ??= docs[0];
  schema.description ??= docs[1];
}
