import type { Db } from './db/database.ts';

/**
 * Instance-wide settings (the `settings` table): secrets made once and kept so they survive
 * restarts (the JWT signing key, git's secret key, the SAML service provider's key pair). Every
 * process may race to make one: the first writer wins, and everyone reads what was kept.
 */

/** Stores a setting unless it exists already; true when this call stored it. */
export async function insertSettingIfAbsent(db: Db, key: string, value: string): Promise<boolean> {
  const inserted = await db
    .insertInto('settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doNothing())
    .returning('key')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** A setting that must exist (throws otherwise). */
export async function readSetting(db: Db, key: string): Promise<string> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return row.value;
}

/** The settings among `keys` that exist, by key. */
export async function readSettings(db: Db, keys: string[]): Promise<Map<string, string>> {
  const rows = await db.selectFrom('settings').select(['key', 'value']).where('key', 'in', keys).execute();
  return new Map(rows.map((r) => [r.key, r.value]));
}
