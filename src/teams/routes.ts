import type { FolioApp } from '../platform/app.ts';

export async function teamRoutes(_app: FolioApp): Promise<void> {}
