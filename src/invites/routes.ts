import type { FolioApp } from '../platform/app.ts';

export async function inviteRoutes(_app: FolioApp): Promise<void> {}
