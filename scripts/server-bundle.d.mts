/** Types of scripts/server-bundle.mjs (plain JavaScript, read by bin/folio before tsx). */
export function filesUnder(dir: string, skip?: string[]): Promise<string[]>;
export function serverBundle(opts?: { warn?: (message: string) => void }): Promise<string | undefined>;
