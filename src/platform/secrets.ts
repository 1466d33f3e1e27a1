import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Config } from './config.ts';
import type { Db } from './db/database.ts';
import { insertSettingIfAbsent, readSetting } from './settings.ts';

/**
 * The instance's secret box: what Folio keeps of others' secrets is stored encrypted (AES-256-GCM):
 * git credentials and webhook secrets, OIDC client secrets, the headers of the MCP servers
 * connected to sites. The key is GIT_SECRET_KEY when set (keep it outside the database: a stolen
 * database dump then holds no usable credential), else a random key created once in the
 * `settings` table.
 */
const keys = new WeakMap<Db, Buffer>();

async function keyFor(db: Db, config: Pick<Config, 'gitSecretKey'>): Promise<Buffer> {
  if (config.gitSecretKey) return Buffer.from(config.gitSecretKey, 'base64');
  const cached = keys.get(db);
  if (cached) return cached;
  await insertSettingIfAbsent(db, 'git_secret_key', randomBytes(32).toString('base64'));
  const key = Buffer.from(await readSetting(db, 'git_secret_key'), 'base64');
  keys.set(db, key);
  return key;
}

export async function encryptSecret(db: Db, config: Pick<Config, 'gitSecretKey'>, text: string): Promise<string> {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await keyFor(db, config), iv);
  const data = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return `v1.${Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url')}`;
}

export async function decryptSecret(db: Db, config: Pick<Config, 'gitSecretKey'>, sealed: string): Promise<string> {
  const raw = Buffer.from(sealed.replace(/^v1\./, ''), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', await keyFor(db, config), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

/**
 * The secret key's setting as a migration finds it: GIT_SECRET_KEY from the environment, as the
 * configuration reads it (a migration is given no configuration).
 */
export function secretKeyFromEnvironment(env: NodeJS.ProcessEnv = process.env): Pick<Config, 'gitSecretKey'> {
  return { gitSecretKey: env.GIT_SECRET_KEY || undefined };
}
