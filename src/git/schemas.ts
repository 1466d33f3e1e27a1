import { Type } from '@sinclair/typebox';

const Url = Type.String({ minLength: 1, maxLength: 2048 });
const Ref = Type.String({ minLength: 1, maxLength: 255, description: 'Git ref, such as refs/heads/main, refs/tags/v1 or refs/pull/12/head' });

const GitInfo = Type.Object(
  {
    provider: Type.Optional(Type.Union([Type.Literal('github'), Type.Literal('gitlab')])),
    url: Type.Optional(Type.String({ maxLength: 2048, description: "The repository's tree URL" })),
  },
  { description: 'Metadata about the git provider, stored on the space (deprecated upstream, accepted)' },
);

const common = {
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL of the repository; may contain basic-auth credentials (stored encrypted, never shown)' }),
  ref: Ref,
  repoCacheID: Type.Optional(Type.String({ maxLength: 255, description: 'Accepted for compatibility; Folio does not cache repositories between operations' })),
  repoTreeURL: Type.Optional(Type.String({ maxLength: 2048, description: 'Prefix of the URLs of files in the repository (the space gitSync.url)' })),
  repoCommitURL: Type.Optional(Type.String({ maxLength: 2048, description: 'Prefix of commit URLs: revision git.url is this prefix + the commit id' })),
  repoProjectDirectory: Type.Optional(Type.String({ maxLength: 1024, description: 'Directory of the project in a monorepo' })),
  timestamp: Type.Optional(Type.String({ format: 'date-time', description: 'When the triggering event happened: an older event never overwrites a newer one' })),
  force: Type.Optional(Type.Boolean({ description: 'Run even if a newer event was synchronised (import), or overwrite remote commits not imported yet (export)' })),
  gitInfo: Type.Optional(GitInfo),
};

export const ImportGitRepository = Type.Object({
  ...common,
  standalone: Type.Optional(Type.Boolean({ description: 'Create the revision without changing the space content' })),
});

export const ExportToGitRepository = Type.Object({
  ...common,
  commitMessage: Type.String({ minLength: 1, maxLength: 10_000, description: 'Message of the commit the export makes' }),
  standalone: Type.Optional(Type.Boolean({ description: 'Accepted for compatibility; an export always writes one commit' })),
});


export const SyncSettingsBody = Type.Object({
  url: Url,
  ref: Ref,
  projectDirectory: Type.Optional(Type.String({ maxLength: 1024 })),
  autoExport: Type.Optional(Type.Boolean({ description: 'Export to the repository after every merge' })),
  rotateWebhookSecret: Type.Optional(Type.Boolean({ description: 'Make a new webhook secret (shown once, in this response)' })),
});

export const SyncSettings = Type.Object({
  url: Type.String({ description: 'Repository URL, without credentials' }),
  ref: Type.String(),
  projectDirectory: Type.String(),
  autoExport: Type.Boolean(),
  hasCredentials: Type.Boolean({ description: 'Credentials are stored (encrypted; never shown)' }),
  webhookURL: Type.String({ description: 'Where the repository host should send push events' }),
  webhookSecret: Type.Optional(Type.String({ description: 'Secret of the push webhook: shown only when made' })),
  syncedCommit: Type.Optional(Type.String()),
  syncedRevision: Type.Optional(Type.String()),
});

export const WebhookResult = Type.Object({ result: Type.Union([Type.Literal('queued'), Type.Literal('ignored')]) });
