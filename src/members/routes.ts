import type { FolioApp } from '../platform/app.ts';

export async function memberRoutes(_app: FolioApp): Promise<void> {}
