/**
 * Answers of integration scripts shared by many readers (a site's script, a block): one run per
 * key while its stamp (integration version, configuration) holds and its lifetime lasts; readers
 * asking while it runs wait for the same run. A run that throws is forgotten at once.
 */
export class AnswerCache<T> {
  private readonly entries = new Map<string, { stamp: string; until: number; answer: Promise<T> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  /** The answer for `key` at `stamp`, computed by `run` when missing; `run` may change its lifetime with `keepFor`. */
  get(key: string, stamp: string, run: (keepFor: (ms: number) => void) => Promise<T>): Promise<T> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.stamp === stamp && hit.until > now) return hit.answer;
    const entry = { stamp, until: now + this.ttlMs, answer: undefined as unknown as Promise<T> };
    entry.answer = run((ms) => (entry.until = Date.now() + ms)).catch((err: unknown) => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
      throw err;
    });
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return entry.answer;
  }
}
