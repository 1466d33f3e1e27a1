import { Hooks } from '../platform/hooks.ts';
import type { Jobs } from '../platform/jobs.ts';

/** What happens to organizations that areas built on them react to (registered in src/wiring.ts). */
export const organizationHooks = new Hooks<{
  /** The default content language changed: spaces without a language of their own follow it. */
  languageChanged: { organizationId: string; jobs: Jobs };
}>();
