/** Types of scripts/bundles.mjs (plain JavaScript, read by bin/folio before tsx). */
export function filesUnder(dir: string, skip?: string[]): Promise<string[]>;
export function serverBundle(opts?: { warn?: (message: string) => void }): Promise<string | undefined>;
export function testBundle(opts?: { warn?: (message: string) => void }): Promise<string | undefined>;
