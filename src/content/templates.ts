/**
 * The content templates a space can be populated with: plain markdown pages, applied as one batch
 * of `insert_page` changes. Pages link to each other by `ref` (resolved to page ids when applied),
 * and to the files given as named content references (`contentRefs`) by `/files/<fileId>`.
 */

/** One page of a template, with the pages nested under it. */
export interface TemplatePage {
  /** Names the page within the template, so other pages can link to it as `[text](ref.md)`. */
  ref: string;
  title: string;
  emoji?: string;
  description?: string;
  /** The page body; `files` maps each content ref name the caller gave to its file id. */
  markdown: (input: TemplateInput) => string;
  pages?: TemplatePage[];
}

export interface TemplateInput {
  /** File id of each named content reference given by the caller. */
  files: ReadonlyMap<string, string>;
  /** When the template is applied (changelog entries are dated with it). */
  now: Date;
}

export interface Template {
  id: string;
  title: string;
  /** Names of the content references the template can place, with what each is used for. */
  contentRefs: Readonly<Record<string, string>>;
  pages: TemplatePage[];
}

/** `![alt](/files/<id>)` and a blank line when the caller gave that content ref, else nothing. */
function image(input: TemplateInput, name: string, alt: string): string {
  const file = input.files.get(name);
  return file ? `![${alt}](/files/${file})\n\n` : '';
}

const day = (date: Date) => date.toISOString().slice(0, 10);

const gettingStarted: Template = {
  id: 'getting-started',
  title: 'Getting started',
  contentRefs: { logo: 'an image shown at the top of the first page' },
  pages: [
    {
      ref: 'getting-started',
      title: 'Getting started',
      emoji: '1f44b',
      description: 'What this product is and how to start using it',
      markdown: (input) =>
        `${image(input, 'logo', 'logo')}Welcome! This guide takes you from nothing to a working setup in a few minutes.\n\n` +
        `## What you will do\n\n` +
        `1. [Install](installation.md) the tools.\n2. Follow the [quick start](quick-start.md).\n3. Read the [next steps](next-steps.md).\n`,
      pages: [
        {
          ref: 'installation',
          title: 'Installation',
          markdown: () =>
            `Install the command line tool with your package manager:\n\n` +
            '```bash\nnpm install --global example-cli\n```\n\n' +
            `## Requirements\n\n- A supported operating system (Linux, macOS or Windows)\n- Network access to download packages\n`,
        },
        {
          ref: 'quick-start',
          title: 'Quick start',
          markdown: () =>
            `Create your first project and run it:\n\n` +
            '```bash\nexample-cli init my-project\ncd my-project\nexample-cli start\n```\n\n' +
            `{% hint style="info" %}\nReplace the commands above with the ones of your product.\n{% endhint %}\n`,
        },
        {
          ref: 'next-steps',
          title: 'Next steps',
          markdown: () => `- Explore the configuration options.\n- Invite your team.\n- Tell us what you think.\n`,
        },
      ],
    },
    {
      ref: 'faq',
      title: 'FAQ',
      emoji: '2753',
      markdown: () =>
        `## Where do I get help?\n\nAsk your question in the community forum or contact support.\n\n` +
        `## How do I update?\n\nRun the installation command again: it installs the latest version.\n`,
    },
  ],
};

const apiReference: Template = {
  id: 'api-reference',
  title: 'API reference',
  contentRefs: { logo: 'an image shown at the top of the overview' },
  pages: [
    {
      ref: 'overview',
      title: 'API overview',
      emoji: '1f4d6',
      description: 'Base URL, formats and conventions of the API',
      markdown: (input) =>
        `${image(input, 'logo', 'logo')}The API is organized around REST. It accepts JSON request bodies, returns JSON responses and uses standard HTTP status codes.\n\n` +
        `## Base URL\n\n` +
        '```\nhttps://api.example.com/v1\n```\n\n' +
        `Every request must be [authenticated](authentication.md). The [endpoints](endpoints.md) page lists what you can do.\n`,
    },
    {
      ref: 'authentication',
      title: 'Authentication',
      emoji: '1f511',
      markdown: () =>
        `Authenticate by sending your API token in the \`Authorization\` header of every request:\n\n` +
        '```bash\ncurl https://api.example.com/v1/me \\\n  -H "Authorization: Bearer <token>"\n```\n\n' +
        `{% hint style="warning" %}\nKeep your tokens secret: anyone with a token can act on your behalf.\n{% endhint %}\n`,
    },
    {
      ref: 'endpoints',
      title: 'Endpoints',
      emoji: '1f517',
      markdown: () =>
        `| Method | Path | Description |\n| --- | --- | --- |\n| GET | /v1/items | List items |\n| POST | /v1/items | Create an item |\n| GET | /v1/items/{id} | Get an item |\n| DELETE | /v1/items/{id} | Delete an item |\n`,
      pages: [
        {
          ref: 'list-items',
          title: 'List items',
          markdown: () =>
            '`GET /v1/items`\n\nReturns the items, newest first.\n\n## Query parameters\n\n- `limit`: how many items to return (default 50)\n- `page`: the cursor of the next page\n\n' +
            '## Response\n\n```json\n{ "items": [], "next": { "page": "..." } }\n```\n',
        },
        {
          ref: 'create-item',
          title: 'Create an item',
          markdown: () =>
            '`POST /v1/items`\n\nCreates an item and returns it.\n\n## Body\n\n```json\n{ "name": "My item" }\n```\n',
        },
      ],
    },
    {
      ref: 'errors',
      title: 'Errors',
      markdown: () =>
        'Errors are answered with a status code and a JSON body:\n\n```json\n{ "error": { "code": 404, "message": "Item not found" } }\n```\n',
    },
  ],
};

const changelog: Template = {
  id: 'changelog',
  title: 'Changelog',
  contentRefs: { logo: 'an image shown at the top of the changelog' },
  pages: [
    {
      ref: 'changelog',
      title: 'Changelog',
      emoji: '1f4dd',
      description: 'What changed, newest first',
      markdown: (input) => {
        const earlier = new Date(input.now.getTime() - 7 * 24 * 3600 * 1000);
        return (
          `${image(input, 'logo', 'logo')}All notable changes, newest first.\n\n` +
          `## ${day(input.now)}\n\n### Added\n\n- This changelog.\n\n` +
          `## ${day(earlier)}\n\n### Changed\n\n- Describe each change in one line, grouped under Added, Changed, Fixed or Removed.\n`
        );
      },
    },
  ],
};

export const TEMPLATES: readonly Template[] = [gettingStarted, apiReference, changelog];

export function findTemplate(id: string): Template | undefined {
  return TEMPLATES.find((t) => t.id === id);
}
