/**
 * Writes to a space's content. Every edit goes into a change request (as in GitBook): the app
 * opens one when the person starts editing from the main content, and continues it afterwards.
 */
import type { ChangeRequest } from '@gitbook/api';
import { api } from './client.ts';

export type ContentChange = Record<string, unknown> & { operation: string };

export interface ContentUpdate {
  changeRequest: ChangeRequest;
  changes: Array<{ object: 'created_page' | 'updated_page' | 'deleted_page'; ref?: string; page: string | { id: string } }>;
  insertedFiles: Array<{ id: string; name: string; downloadURL: string; contentType: string }>;
}

/** Applies changes to the change request `number` and answers what they did (the pages created, the files inserted). */
export function editContent(spaceId: string, number: number, changes: ContentChange[]): Promise<ContentUpdate> {
  return api.post<ContentUpdate>(`/spaces/${spaceId}/change-requests/${number}/content`, { changes }, { compat: 'false' });
}

export function openChangeRequest(spaceId: string, subject: string): Promise<ChangeRequest> {
  return api.post<ChangeRequest>(`/spaces/${spaceId}/change-requests`, { subject });
}

/** The id of a created page in an update's answer. */
export function createdPageId(update: ContentUpdate): string | undefined {
  const created = update.changes.find((c) => c.object === 'created_page');
  if (!created) return undefined;
  return typeof created.page === 'string' ? created.page : created.page.id;
}

/** A File as base64 (without the data: prefix), for insert_files. */
export async function fileBase64(file: Blob): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
