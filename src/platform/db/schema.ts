import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** Checked-in description of the tables; test/migrations.test.ts verifies it matches the migrations. */
export interface Database {
  users: UsersTable;
  api_tokens: ApiTokensTable;
  organizations: OrganizationsTable;
  members: MembersTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  invite_links: InviteLinksTable;
  email_invites: EmailInvitesTable;
  agent_instructions: AgentInstructionsTable;
  settings: SettingsTable;
  jobs: JobsTable;
  collections: CollectionsTable;
  spaces: SpacesTable;
  revisions: RevisionsTable;
  content_permissions: ContentPermissionsTable;
  space_counts: SpaceCountsTable;
  tree_nodes: TreeNodesTable;
  documents: DocumentsTable;
  space_documents: SpaceDocumentsTable;
  blobs: BlobsTable;
  storage_uploads: StorageUploadsTable;
  change_requests: ChangeRequestsTable;
  change_request_contributors: ChangeRequestContributorsTable;
  change_request_reviewers: ChangeRequestReviewersTable;
  change_request_reviews: ChangeRequestReviewsTable;
  comments: CommentsTable;
  comment_replies: CommentRepliesTable;
  comment_reactions: CommentReactionsTable;
  search_pages: SearchPagesTable;
  search_state: SearchStateTable;
  search_words: SearchWordsTable;
  ask_sections: AskSectionsTable;
  ask_embedding_state: AskEmbeddingStateTable;
  ask_vector_versions: AskVectorVersionsTable;
  integrations: IntegrationsTable;
  integration_installations: IntegrationInstallationsTable;
  integration_space_installations: IntegrationSpaceInstallationsTable;
  integration_site_installations: IntegrationSiteInstallationsTable;
  integration_tokens: IntegrationTokensTable;
  integration_events: IntegrationEventsTable;
  integration_delivery_leases: IntegrationDeliveryLeasesTable;
  translations: TranslationsTable;
  import_runs: ImportRunsTable;
  pdf_exports: PdfExportsTable;
  translation_pages: TranslationPagesTable;
  translation_memory: TranslationMemoryTable;
  glossary_entries: GlossaryEntriesTable;
  saml_providers: SamlProvidersTable;
  saml_requests: SamlRequestsTable;
  password_setup_tokens: PasswordSetupTokensTable;
  saml_assertions: SamlAssertionsTable;
  saml_identities: SamlIdentitiesTable;
  oidc_providers: OidcProvidersTable;
  oidc_requests: OidcRequestsTable;
  oidc_identities: OidcIdentitiesTable;
  openapi_specs: OpenAPISpecsTable;
  openapi_spec_versions: OpenAPISpecVersionsTable;
  sites: SitesTable;
  site_section_groups: SiteSectionGroupsTable;
  site_sections: SiteSectionsTable;
  site_spaces: SiteSpacesTable;
  site_share_links: SiteShareLinksTable;
  site_redirects: SiteRedirectsTable;
  site_mcp_servers: SiteMcpServersTable;
  collab_documents: CollabDocumentsTable;
  collab_relay: CollabRelayTable;
  conversations: ConversationsTable;
  issues_clusters: IssuesClustersTable;
  conversation_issues: ConversationIssuesTable;
  insight_terms: InsightTermsTable;
  insight_state: InsightStateTable;
  git_syncs: GitSyncsTable;
  site_questions: SiteQuestionsTable;
  site_question_answers: SiteQuestionAnswersTable;
  site_question_answer_sources: SiteQuestionAnswerSourcesTable;
  site_events: SiteEventsTable;
}

export type Role = 'admin' | 'create' | 'review' | 'edit' | 'comment' | 'read';
export type RoleOrGuest = Role | null;
export type Json = unknown;

export interface UsersTable {
  id: string;
  seq: Generated<number>;
  email: string;
  email_verified: Generated<boolean>;
  display_name: string;
  photo_url: string | null;
  created_at: Date;
  /** scrypt hash of the password with its salt and parameters (src/sign-in/password-hash.ts); null: none set. */
  password_hash: Generated<string | null>;
}

/** One-time links where a person chooses their password (only the token's hash is kept). */
export interface PasswordSetupTokensTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export interface ApiTokensTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: Date;
  /** A label the owner chose, to tell tokens apart in a listing. */
  name: string | null;
  /** After this instant the token no longer authenticates; null: never expires. */
  expires_at: Date | null;
  /** When the token was revoked; a revoked token no longer authenticates. */
  revoked_at: Date | null;
  /** The organization whose single sign-on issued this token (session or token); null otherwise. */
  sso_organization_id: string | null;
  /** The token behind an app session (password sign-in, src/sign-in/): ended when the password changes. */
  app_session: Generated<boolean>;
  /** A content token reads this space's content and nothing else (src/sites/content-token.ts); null: an ordinary token. */
  scope_space_id: string | null;
  /** The token a content token was derived from: it authenticates only while that one does. */
  parent_token_id: string | null;
  /**
   * A content token resolved through this site also reads what the site publishes to its visitors
   * (the space's current content), while the site still does (src/sites/content-token.ts).
   */
  scope_site_id: string | null;
  /** The site's visibility when the token was given: a change of audience ends the site's grant. */
  scope_site_visibility: string | null;
  /** The share link a share-link site's grant came through: it ends when the link is deactivated. */
  scope_share_link_id: string | null;
  /** For a visitor-auth site: a hash of the key that signed the visitor's JWT; a new key ends the grant. */
  scope_site_key_hash: string | null;
}

export interface MergeRules {
  type: 'none' | 'inherit' | 'rules';
  rules?: { rule: 'require_specific_reviewers'; users: string[] }[];
}

export interface OrganizationsTable {
  id: string;
  seq: Generated<number>;
  title: string;
  email_domains: string[];
  hostname: string | null;
  type: Generated<string>;
  use_case: string | null;
  community_type: string | null;
  default_role: RoleOrGuest;
  default_content: { type: 'site'; site: string } | null;
  logo: string | null;
  sso: Generated<boolean>;
  ai: Generated<boolean>;
  invite_links: Generated<boolean>;
  merge_rules: MergeRules;
  /** Default content language (a TranslationLanguage code): new spaces take it; search and insights fall back to it. */
  language: Generated<string | null>;
  created_at: Date;
}

export interface MembersTable {
  organization_id: string;
  user_id: string;
  seq: Generated<number>;
  role: RoleOrGuest;
  disabled: Generated<boolean>;
  sso: Generated<boolean>;
  joined_at: Date;
  last_seen_at: Date | null;
}

export interface TeamsTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  title: string;
  created_at: Date;
}

export type TeamMemberRole = 'owner' | 'member';

export interface TeamMembersTable {
  team_id: string;
  organization_id: string;
  user_id: string;
  seq: Generated<number>;
  role: TeamMemberRole;
  added_at: Date;
}

export interface InviteLinksTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  role: RoleOrGuest;
  created_by: string;
  created_at: Date;
}

export interface EmailInvitesTable {
  organization_id: string;
  email: string;
  role: RoleOrGuest;
  sso: Generated<boolean>;
  invited_by: string;
  created_at: Date;
}

export interface AgentInstructionsTable {
  organization_id: string;
  instructions: Json;
  updated_at: Date;
  updated_by: string;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export type JobStatus = 'queued' | 'running' | 'done' | 'failed';

export interface JobsTable {
  id: Generated<number>;
  type: string;
  payload: Json;
  status: Generated<JobStatus>;
  attempts: Generated<number>;
  max_attempts: Generated<number>;
  run_at: Date;
  locked_until: Date | null;
  last_error: string | null;
  created_at: Date;
  finished_at: Date | null;
}

export type UserRow = Selectable<UsersTable>;
export type OrganizationRow = Selectable<OrganizationsTable>;
export type NewOrganization = Insertable<OrganizationsTable>;
export type OrganizationUpdate = Updateable<OrganizationsTable>;
export type MemberRow = Selectable<MembersTable>;
export type TeamRow = Selectable<TeamsTable>;
export type InviteLinkRow = Selectable<InviteLinksTable>;
export type JobRow = Selectable<JobsTable>;

/** A role, null (no access by default) or 'inherit' (from the parent collection or organization). */
export type DefaultLevel = Role | null | 'inherit';

export interface CollectionsTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  parent_id: string | null;
  title: string;
  description: string | null;
  default_level: DefaultLevel;
  position: string;
  created_at: Date;
  updated_at: Date;
}

export type Visibility = 'public' | 'unlisted' | 'share-link' | 'visitor-auth' | 'in-collection' | 'private';
export type EditMode = 'live' | 'locked';

export interface SpacesTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  parent_id: string | null;
  title: string;
  emoji: string | null;
  icon: string | null;
  visibility: Visibility;
  edit_mode: EditMode;
  language: string | null;
  default_level: DefaultLevel;
  merge_rules: MergeRules;
  revision_id: string;
  share_key: string;
  position: string;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  /** The public `gitSync` object of the space (set by git sync). */
  git_sync: Generated<Json | null>;
  /** Whether `space_documents` lists the documents of its revisions (false only for spaces from before it existed). */
  documents_indexed: Generated<boolean>;
}

export interface RevisionsTable {
  id: string;
  space_id: string;
  organization_id: string;
  parents: string[];
  type: Generated<string>;
  created_by: string | null;
  created_at: Date;
  /** Root of the revision's content tree ('' for empty content). */
  root: Generated<string>;
  message: string | null;
  /** Git commit of the revision (official RevisionGit): oid, message, createdByGitBook, url, ref. */
  git: Generated<Json | null>;
}

export interface ContentPermissionsTable {
  organization_id: string;
  target_type: 'space' | 'collection';
  target_id: string;
  principal_type: 'user' | 'team';
  principal_id: string;
  seq: Generated<number>;
  role: Role;
  created_at: Date;
}

export type CollectionRow = Selectable<CollectionsTable>;
export type SpaceRow = Selectable<SpacesTable>;
export type RevisionRow = Selectable<RevisionsTable>;

/** Live spaces per organization, maintained by a trigger on `spaces`. */
export interface SpaceCountsTable {
  organization_id: string;
  live: number;
}

export interface TreeNodesTable {
  hash: string;
  data: Json;
}

export interface DocumentsTable {
  hash: string;
  markdown: string;
}

export interface SpaceDocumentsTable {
  space_id: string;
  hash: string;
}

export interface BlobsTable {
  hash: string;
  /** The bytes, while the embedded store holds them; null once they live in object storage. */
  data: Uint8Array | null;
  size: number;
}

export interface StorageUploadsTable {
  /** The object key answered to the client (`uploads/<organization>/<id>/<name>`). */
  key: string;
  organization_id: string;
  kind: string;
  name: string;
  content_type: string;
  /** The size the client announced: the upload must match it. */
  size: number;
  created_by: string;
  created_at: Date;
  expires_at: Date;
  /** Hash of the bytes once they arrived and were stored by hash. */
  blob: string | null;
}

export type ChangeRequestStatus = 'draft' | 'open' | 'archived' | 'merged';

export interface ChangeRequestsTable {
  id: string;
  seq: Generated<number>;
  space_id: string;
  organization_id: string;
  number: number;
  status: ChangeRequestStatus;
  subject: string;
  description: Json | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  revision_initial: string;
  revision: string;
  revision_merged_ancestor: string | null;
  revision_merged: string | null;
  merged_by: string | null;
  merged_at: Date | null;
  conflicts: Generated<string[]>;
  /** The issues cluster this change request addresses (src/insights). */
  conversations_issues_cluster: Generated<string | null>;
}

export interface ChangeRequestContributorsTable {
  change_request_id: string;
  user_id: string;
}

export interface ChangeRequestReviewersTable {
  change_request_id: string;
  user_id: string;
  seq: Generated<number>;
  requested_by: string | null;
  created_at: Date;
}

export interface ChangeRequestReviewsTable {
  id: string;
  seq: Generated<number>;
  change_request_id: string;
  reviewer_id: string;
  status: 'approved' | 'changes-requested';
  revision: string;
  created_at: Date;
}

export type ChangeRequestRow = Selectable<ChangeRequestsTable>;

export interface CommentsTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  space_id: string;
  change_request_id: string | null;
  revision_id: string;
  page_id: string | null;
  node_id: string | null;
  table_cell: { record: string; definition: string } | null;
  body: string;
  posted_by: string | null;
  posted_at: Date;
  edited_at: Date | null;
  status: 'open' | 'resolved';
  resolved_at: Date | null;
  resolved_by: string | null;
}

export interface CommentRepliesTable {
  id: string;
  seq: Generated<number>;
  comment_id: string;
  body: string;
  posted_by: string | null;
  posted_at: Date;
  edited_at: Date | null;
}

export interface CommentReactionsTable {
  target_id: string;
  emoji: string;
  user_id: string;
  reacted_at: Date;
}

export type CommentRow = Selectable<CommentsTable>;
export type CommentReplyRow = Selectable<CommentRepliesTable>;

/** A section's vector for Ask (src/ask/vectors.ts), keyed by the hash of the model and the text embedded. */
export interface AskSectionsTable {
  space_id: string;
  page_id: string;
  hash: string;
  section_id: string;
  section_title: string;
  /** float4 values, little-endian, normalized to length 1. */
  vector: Buffer;
}

/** How many times a space's section vectors changed (processes cache them until it moves). */
export interface AskVectorVersionsTable {
  space_id: string;
  version: ColumnType<string, number | string, number | string>;
}

/** The search root and model a space's section vectors were last brought up to. */
export interface AskEmbeddingStateTable {
  space_id: string;
  root: string;
  model: string;
}

export interface SearchPagesTable {
  space_id: string;
  page_id: string;
  title: string;
  description: Generated<string>;
  path: string;
  ancestors: Json;
  sections: Json;
  /** A text search configuration name (regconfig): the space's language when the row was written. */
  ts_config: Generated<string>;
  /** Indexed title (weight A) and description with headings (weight B), spaceless scripts cut into words. */
  terms_a: Generated<string>;
  terms_b: Generated<string>;
  /** Indexed body (weight C), cut the same way. */
  body: Generated<string>;
  /** Title and headings, matched by trigram similarity (misspelled words). */
  fuzzy: Generated<string>;
  /** Generated by the database from ts_config, terms_a, terms_b and body. */
  tsv: Generated<string>;
}

/** Words of a space's titles and headings, with how many pages hold them: what typos are corrected to. */
export interface SearchWordsTable {
  space_id: string;
  word: string;
  pages: number;
}

export interface SearchStateTable {
  space_id: string;
  root: string;
  /** The configuration every row had at the last full index or language change (null: unknown). */
  ts_config: Generated<string | null>;
}

export interface TranslationStats {
  runs: number;
  totalWords: number;
  totalPages: number;
  totalDuration: number;
  latestRunDuration: number;
  latestPages: number;
  latestWords: number;
}

export interface TranslationsTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  source_space_id: string;
  source_language: string;
  language: string;
  instructions: Json | null;
  status: 'pending' | 'running' | 'completed';
  error: string | null;
  failed_at: Date | null;
  queued: boolean;
  rerun: boolean;
  result_space_id: string | null;
  result_revision: string | null;
  last_source_root: string | null;
  last_settings: string | null;
  stats: TranslationStats;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}
export type TranslationRow = Selectable<TranslationsTable>;

export type ImportRunStatus = 'pending' | 'in-progress' | 'completed' | 'failed' | 'cancelled';

export type PdfExportStatus = 'pending' | 'running' | 'done' | 'failed';

export interface PdfExportsTable {
  id: string;
  organization_id: string;
  space_id: string;
  /** Hash of what is printed (revision root, selection, title): equal keys print the same PDF. */
  key: string;
  /** What to print: { root, title, page?, only? }. */
  request: Json;
  status: PdfExportStatus;
  /** Pages to print, and how many of them are laid out so far. */
  pages_total: number;
  pages_done: Generated<number>;
  /** The printed PDF, once done. */
  blob: string | null;
  /** File name of the PDF (`Title.pdf`). */
  name: string;
  /** Why printing failed. */
  reason: string | null;
  /** The background job printing it (none when printed while the request waited). */
  job_id: number | null;
  created_at: Date;
  updated_at: Date;
}

export type PdfExportRow = Selectable<PdfExportsTable>;

export interface ImportRunsTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  space_id: string;
  change_request_id: string | null;
  page_id: string | null;
  site_id: string | null;
  /** The official ContentImportSource as given. */
  source: Json;
  status: ImportRunStatus;
  reason: string | null;
  /** What was recognised: docusaurus, mkdocs, folder, files. */
  project: string | null;
  /** { pagesFound, pagesConverted, pagesFailed }. */
  progress: Json;
  /** [{ page?, message }]: what could not be converted as it was. */
  warnings: Json;
  /** The official `pages` of the run once it completed. */
  pages: Json | null;
  result_revision: string | null;
  /** The job running the import (a run whose job ended without a word is shown as failed). */
  job_id: number | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}
export type ImportRunRow = Selectable<ImportRunsTable>;

export interface TranslationPagesTable {
  translation_id: string;
  source_page_id: string;
  target_page_id: string;
  fingerprint: string | null;
}

export interface TranslationMemoryTable {
  organization_id: string;
  source_hash: string;
  language: string;
  instructions_hash: string;
  translation: string;
  created_at: Date;
}

export interface GlossaryEntriesTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  translations: Record<string, string>;
  created_at: Date;
  updated_at: Date;
}
export type GlossaryEntryRow = Selectable<GlossaryEntriesTable>;
export interface SamlProvidersTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  label: string;
  /** The identity provider's entity id (the Issuer of its responses). */
  entity_id: string | null;
  /** The identity provider's signing certificate, PEM. */
  certificate: string | null;
  /** Where authentication requests are sent (HTTP-Redirect binding). */
  sso_url: string | null;
  default_team: string | null;
  default_role: RoleOrGuest;
  created_at: Date;
  updated_at: Date;
}

/** An AuthnRequest Folio sent; a response must answer one, once, before it expires. */
export interface SamlRequestsTable {
  id: string;
  provider_id: string;
  created_at: Date;
  expires_at: Date;
  consumed_at: Date | null;
}

/** Assertion ids already accepted, kept until the assertion expires, so a replay is refused. */
export interface SamlAssertionsTable {
  provider_id: string;
  assertion_id: string;
  expires_at: Date;
}

/** Which Folio user a provider's NameID signs in as. */
export interface SamlIdentitiesTable {
  provider_id: string;
  name_id: string;
  user_id: string;
  created_at: Date;
}

export type SamlProviderRow = Selectable<SamlProvidersTable>;

/** An OpenID Connect provider of an organization (src/sso/oidc-*.ts). */
export interface OidcProvidersTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  label: string;
  /** The issuer identifier; its /.well-known/openid-configuration is read (discovery). */
  issuer: string | null;
  client_id: string | null;
  /** The client secret, sealed with the instance's secret key (platform/secrets.ts); null for a public client. */
  client_secret_sealed: string | null;
  enabled: boolean;
  default_team: string | null;
  default_role: RoleOrGuest;
  created_at: Date;
  updated_at: Date;
}

/** A sign-in Folio started: the callback must present its state, from the same browser, once. */
export interface OidcRequestsTable {
  state: string;
  provider_id: string;
  nonce: string;
  code_verifier: string;
  /** SHA-256 (base64url) of the browser-binding cookie set at the start. */
  browser_hash: string;
  next_path: string | null;
  created_at: Date;
  expires_at: Date;
  consumed_at: Date | null;
}

/** Which Folio user a provider's subject (`sub`) signs in as. */
export interface OidcIdentitiesTable {
  provider_id: string;
  subject: string;
  user_id: string;
  created_at: Date;
}

export type OidcProviderRow = Selectable<OidcProvidersTable>;
export type OidcRequestRow = Selectable<OidcRequestsTable>;
export type SiteVisibility = 'public' | 'unlisted' | 'share-link' | 'visitor-auth';

export interface SitesTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  type: string;
  title: string;
  /** Unique in the organization; the site's path under PUBLIC_URL/<organization>/. */
  basename: string;
  /** Custom hostname, unique across the instance. */
  hostname: string | null;
  /** Proxy origin (host plus path), or null. */
  proxy: string | null;
  visibility: SiteVisibility;
  published: Generated<boolean>;
  adaptive_content: Generated<boolean>;
  agents_context: Generated<'included' | 'excluded'>;
  adaptive_schema: Json | null;
  adaptive_schema_updated_at: Date | null;
  customization: Generated<Json>;
  customization_updated_at: Date | null;
  /** Secret that signs visitor JWTs of a visitor-auth site (HS256). */
  auth_key: string;
  auth_backend: Generated<'custom' | 'integration'>;
  auth_fallback_url: string | null;
  auth_logout_url: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}
export type SiteRow = Selectable<SitesTable>;

export interface SiteSectionGroupsTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  site_id: string;
  parent_id: string | null;
  title: string;
  icon: string | null;
  position: string;
  created_at: Date;
}
export type SiteSectionGroupRow = Selectable<SiteSectionGroupsTable>;

export interface SiteSectionsTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  site_id: string;
  group_id: string | null;
  title: string;
  description: string | null;
  icon: string | null;
  path: string;
  condition: string | null;
  is_default: Generated<boolean>;
  position: string;
  created_at: Date;
}
export type SiteSectionRow = Selectable<SiteSectionsTable>;

export interface SiteSpacesTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  site_id: string;
  space_id: string;
  /** Null: at the site root (a site without sections). */
  section_id: string | null;
  path: string;
  condition: string | null;
  hidden: Generated<boolean>;
  is_default: Generated<boolean>;
  position: string;
  customization: Json | null;
  customization_updated_at: Date | null;
  created_at: Date;
}
export type SiteSpaceRow = Selectable<SiteSpacesTable>;

export interface SiteShareLinksTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  site_id: string;
  name: string;
  token: string;
  active: Generated<boolean>;
  created_at: Date;
}
export type SiteShareLinkRow = Selectable<SiteShareLinksTable>;

export interface SiteRedirectsTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  site_id: string;
  source: string;
  draft: Generated<boolean>;
  capture_wildcard: Generated<boolean>;
  permanent: Generated<boolean>;
  destination: Json;
  created_at: Date;
  updated_at: Date | null;
}
export type SiteRedirectRow = Selectable<SiteRedirectsTable>;

export interface SiteMcpServersTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  site_id: string;
  name: string;
  url: string;
  transport: 'sse' | 'http';
  /** The headers sent to the server (its credentials): their JSON object, sealed with the instance's secret key (platform/secrets.ts). */
  headers_sealed: string;
  condition: string | null;
  created_at: Date;
  updated_at: Date | null;
}
export type SiteMcpServerRow = Selectable<SiteMcpServersTable>;
export type Impact = 'low' | 'medium' | 'high';

export interface ConversationsTable {
  organization_id: string;
  /** The caller's id: ingestion is idempotent by it. */
  id: string;
  seq: Generated<number>;
  subject: string;
  source: string;
  parts: Json;
  metadata: Json;
  /** Hash of what was ingested: re-sending the same conversation changes nothing. */
  content_hash: string;
  created_at: Date;
  ingested_at: Date;
  processed_at: Date | null;
  impact: Impact | null;
}

export interface IssuesClustersTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  label: string;
  icon: string;
  summary: Json;
  muted: Generated<boolean>;
  impact: Impact;
  /** `tfidf` (built-in) or `embedding:<model>`: only issues of the same kind are compared. */
  vector_kind: string;
  /** Sum of the unit vectors of its issues (sparse: term or dimension → weight). */
  centroid: Json;
  keywords: Generated<Json>;
  issues: Generated<number>;
  created_at: Date;
  updated_at: Date;
}

export type OpenAPIProcessingState = 'pending' | 'progress' | 'complete';
export type OpenAPIErrorCode = 'FETCH_TIMEOUT' | 'FETCH_ERROR' | 'PARSE_ERROR';

/** One problem found while processing a spec, with where it is when known. */
export interface OpenAPIProcessError {
  message: string;
  code: string;
  file?: string;
  pointer?: string;
  line?: number;
}

export interface OpenAPISpecsTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  slug: string;
  /** Where the spec is fetched from; null for a spec given as text. */
  source_url: string | null;
  /** The spec given as text (`source: {text}`); null for a URL source. */
  source_text: string | null;
  visibility: 'private' | 'public';
  processing_state: OpenAPIProcessingState;
  /** Grows with each PUT: a job carries the generation it was queued for. */
  generation: number;
  last_version_id: string | null;
  last_processed_at: Date | null;
  last_error_code: OpenAPIErrorCode | null;
  last_errors: OpenAPIProcessError[];
  last_error_count: number;
  created_at: Date;
  updated_at: Date;
}

export interface ConversationIssuesTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  conversation_id: string;
  cluster_id: string | null;
  title: string;
  details: Json;
  impact: Impact;
  source: string;
  vector_kind: string;
  /** Unit term-frequency vector of stems (keywords, document frequencies, TF-IDF clustering). */
  terms: Json;
  /** The embedding when vector_kind is `embedding:<model>`; null for TF-IDF (terms are the vector). */
  vector: Json | null;
  created_at: Date;
  ingested_at: Date;
}

export interface InsightTermsTable {
  organization_id: string;
  term: string;
  /** A word as written for the stem (or pair of stems): keywords are shown with it. */
  word: string;
  df: number;
}

export interface InsightStateTable {
  organization_id: string;
  documents: Generated<number>;
  assigned_since_recluster: Generated<number>;
  reclustered_at: Date | null;
}

export type ConversationRow = Selectable<ConversationsTable>;
export type IssuesClusterRow = Selectable<IssuesClustersTable>;
export type ConversationIssueRow = Selectable<ConversationIssuesTable>;
/** A file of a spec version: its path relative to the root's folder (or absolute URL), and its bytes by hash. */
export interface OpenAPIVersionFile {
  path: string;
  url: string;
  format: 'json' | 'yaml';
  /** Blob of the bytes as fetched. */
  raw: string;
  /** Blob of the parsed document as JSON text. */
  json: string;
}

export interface OpenAPISpecVersionsTable {
  id: string;
  seq: Generated<number>;
  spec_id: string;
  organization_id: string;
  url: string;
  content_hash: string;
  /** The root first. */
  files: OpenAPIVersionFile[];
  created_at: Date;
}

export type OpenAPISpecRow = Selectable<OpenAPISpecsTable>;
export type OpenAPISpecVersionRow = Selectable<OpenAPISpecVersionsTable>;
/** One synchronised space: settings, the latest operation, and what was last synced (src/git/). */
export interface GitSyncsTable {
  space_id: string;
  organization_id: string;
  url: string | null;
  ref: string | null;
  project_directory: Generated<string>;
  /** Encrypted `username:password` (src/platform/secrets.ts). */
  credentials: string | null;
  /** Encrypted secret that push webhooks must prove they know. */
  webhook_secret: string | null;
  auto_export: Generated<boolean>;
  repo_tree_url: string | null;
  repo_commit_url: string | null;
  provider: string | null;
  /** Who set up the sync: automatic imports and exports act as them. */
  configured_by: string | null;
  last_event_at: Date | null;
  synced_revision: string | null;
  synced_commit: string | null;
  manifest: Json | null;
  op_state: string | null;
  op_direction: string | null;
  op_started_at: Date | null;
  op_ended_at: Date | null;
  op_error: string | null;
  lock_job: number | null;
  lock_until: Date | null;
  updated_at: Date;
}

export type GitSyncRow = Selectable<GitSyncsTable>;

export type InstallationStatus = 'active' | 'pending' | 'paused';

export interface IntegrationsTable {
  id: string;
  seq: Generated<number>;
  name: string;
  organization_id: string;
  /** The user an integration's tokens act as (author of what its scripts write). */
  bot_user_id: string;
  version: Generated<number>;
  runtime: Generated<string>;
  title: string;
  description: Generated<string>;
  summary: Generated<string>;
  visibility: Generated<'public' | 'private' | 'unlisted'>;
  target: Generated<'all' | 'site' | 'space' | 'organization'>;
  scopes: Generated<Json>;
  categories: Generated<Json>;
  blocks: Generated<Json>;
  content_sources: Generated<Json>;
  configurations: Generated<Json>;
  external_links: Generated<Json>;
  /** Base64 image. */
  icon: string | null;
  preview_images: Generated<Json>;
  script: string | null;
  /** AES-256-GCM of the JSON secrets map (see src/integrations/secrets.ts); never returned. */
  secrets_encrypted: string | null;
  content_security_policy: Json | null;
  dev_tunnel_url: string | null;
  dev_all: Generated<boolean>;
  created_at: Date;
  updated_at: Date;
}

export interface IntegrationInstallationsTable {
  id: string;
  seq: Generated<number>;
  integration_id: string;
  organization_id: string;
  status: InstallationStatus;
  space_selection: Generated<'all' | 'selected'>;
  site_selection: Generated<'all' | 'selected'>;
  configuration: Generated<Json>;
  external_ids: Generated<Json>;
  created_at: Date;
  updated_at: Date;
}

export interface IntegrationSpaceInstallationsTable {
  installation_id: string;
  space_id: string;
  seq: Generated<number>;
  status: InstallationStatus;
  configuration: Generated<Json>;
  external_ids: Generated<Json>;
  created_at: Date;
  updated_at: Date;
}

export interface IntegrationSiteInstallationsTable {
  installation_id: string;
  site_id: string;
  seq: Generated<number>;
  status: InstallationStatus;
  configuration: Generated<Json>;
  external_ids: Generated<Json>;
  created_at: Date;
  updated_at: Date;
}

export interface IntegrationTokensTable {
  token_hash: string;
  integration_id: string;
  /** Null: a token of the integration itself. */
  installation_id: string | null;
  created_at: Date;
  expires_at: Date;
}

export interface IntegrationEventsTable {
  id: string;
  seq: Generated<number>;
  integration_id: string;
  installation_id: string | null;
  space_id: string | null;
  payload: Json;
  /** pending (in the outbox), success, failed (no attempt left). */
  status: Generated<'pending' | 'success' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Date;
  logs: Generated<Json>;
  created_at: Date;
  delivered_at: Date | null;
}

export type IntegrationRow = Selectable<IntegrationsTable>;
export type InstallationRow = Selectable<IntegrationInstallationsTable>;
export type SpaceInstallationRow = Selectable<IntegrationSpaceInstallationsTable>;
export type SiteInstallationRow = Selectable<IntegrationSiteInstallationsTable>;
export type IntegrationEventRow = Selectable<IntegrationEventsTable>;

/** Lease of the worker delivering an installation's events (one at a time keeps them in order). */
export interface IntegrationDeliveryLeasesTable {
  installation_id: string;
  until: Date;
}

/** A distinct question asked on a site (Ask), by its normalized text. */
export interface SiteQuestionsTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  site_id: string;
  /** The text as first asked. */
  question: string;
  /** Lower case, spaces collapsed, no final punctuation: one row per distinct question. */
  normalized: string;
  type: 'exploring' | 'how-to' | 'troubleshooting' | 'reference' | 'unknown';
  created_at: Date;
  /** When it was last asked. */
  asked_at: Date;
}

/** One time a question was asked on a site, with the answer given. */
export interface SiteQuestionAnswersTable {
  id: string;
  seq: Generated<number>;
  organization_id: string;
  site_id: string;
  question_id: string;
  raw: string;
  text: string;
  /** The first answer of the visitor session's thread (its own id for a first question). */
  thread_id: string;
  previous_id: string | null;
  visitor_id: string | null;
  session_id: string | null;
  /** The answer, in markdown. */
  response: string;
  language: string;
  answered: 'no' | 'partially' | 'yes';
  helpfulness: 'low' | 'medium' | 'high';
  relevance: 'relevant' | 'spam' | 'off-topic' | 'unclear';
  /** `site` (a reader of the published site) or `api`. */
  channel: string;
  /** A reader's rating of the answer: 1 or -1. */
  rating: number | null;
  created_at: Date;
  updated_at: Date;
}

/** A page passage an answer was built from. */
export interface SiteQuestionAnswerSourcesTable {
  answer_id: string;
  position: number;
  organization_id: string;
  site_id: string;
  question_id: string;
  space_id: string;
  revision_id: string;
  page_id: string;
  title: string;
  passage: string;
  weight: number;
}

/** A reader event of a published site (page view, search, feedback, question). */
export interface SiteEventsTable {
  seq: Generated<number>;
  organization_id: string;
  site_id: string;
  /** The official `SiteInsightsEventType` (page_view, search_type_query, page_post_feedback, ask_question…). */
  type: string;
  url: string;
  url_path: string;
  /** `site`, `embed` or `server`. */
  display_context: string;
  site_section_id: string | null;
  site_space_id: string | null;
  share_key: string | null;
  space_id: string | null;
  page_id: string | null;
  /** The search query or question. */
  query: string | null;
  /** A page's feedback: bad, ok or good. */
  feedback_rating: string | null;
  /** A rating of an answer: 1 or -1. */
  ask_rating: number | null;
  visitor_id: string;
  session_id: string;
  created_at: Date;
}

export type SiteQuestionRow = Selectable<SiteQuestionsTable>;
export type SiteQuestionAnswerRow = Selectable<SiteQuestionAnswersTable>;
export type SiteQuestionAnswerSourceRow = Selectable<SiteQuestionAnswerSourcesTable>;

/** A page being co-edited in a change request: its Yjs state and the hash of the markdown it was last saved as (src/collab/). */
export interface CollabDocumentsTable {
  change_request_id: string;
  page_id: string;
  organization_id: string;
  state: Uint8Array;
  base_hash: string;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** A co-editing update too big for a NOTIFY payload, read by the other processes (src/collab/relay.ts). */
export interface CollabRelayTable {
  id: Generated<string>;
  data: Uint8Array;
  created_at: ColumnType<Date, Date | undefined, Date>;
}
