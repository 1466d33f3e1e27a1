import type { Ctx } from '../platform/context.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { requireOwner } from './catalogue.ts';
import * as store from './store.ts';

/** What an integration's developers use: development mode (a tunnel to their machine) and the log of its events. */

export async function setDevelopmentMode(ctx: Ctx, name: string, tunnelUrl: string | null, all = false): Promise<void> {
  const { row } = await requireOwner(ctx, name, 'develop it');
  if (ctx.integration) throw new ForbiddenError('An integration token cannot change development mode');
  if (tunnelUrl !== null) {
    let url: URL;
    try {
      url = new URL(tunnelUrl);
    } catch {
      throw new BadRequestError('tunnelUrl: must be an absolute http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadRequestError('tunnelUrl: must be an absolute http(s) URL');
  }
  await store.setDevelopmentTunnel(ctx.db, row.organization_id, row.id, tunnelUrl, all);
}

export async function listEvents(ctx: Ctx, name: string, page: PageRequest) {
  const { row } = await requireOwner(ctx, name, 'read its events');
  return store.listEvents(ctx.db, row.id, ctx.integration?.installationId ?? undefined, page);
}

export async function getEvent(ctx: Ctx, name: string, eventId: string) {
  const { row } = await requireOwner(ctx, name, 'read its events');
  const event = await store.findEvent(ctx.db, row.id, eventId);
  if (!event || (ctx.integration?.installationId && event.installation_id !== ctx.integration.installationId)) throw new NotFoundError('Event');
  return event;
}
