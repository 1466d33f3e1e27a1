import { webcrypto } from 'node:crypto';
import type { Db } from '../platform/db/database.ts';
import { insertSettingIfAbsent, readSettings } from '../platform/settings.ts';

/** An RSA key pair with a self-signed X.509 certificate, both PEM. */
export interface KeyAndCertificate {
  privateKey: string;
  certificate: string;
}

const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 } as const;

function pem(label: string, der: ArrayBuffer): string {
  const lines = Buffer.from(der).toString('base64').match(/.{1,64}/g)!;
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/**
 * Generates an RSA-2048 key and a self-signed certificate for it (SHA-256), valid from a day ago
 * (clock skew) for `days` days. Node can create keys but not certificates: @peculiar/x509 builds
 * the certificate over WebCrypto.
 */
export async function selfSignedCertificate(
  commonName: string,
  opts: { days?: number; notBefore?: Date; notAfter?: Date } = {},
): Promise<KeyAndCertificate> {
  // Loaded on first use (a server that never signs a SAML request never pays for it). @peculiar/x509
  // resolves its parts through tsyringe, which needs the Reflect metadata API loaded first.
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  const crypto = webcrypto as unknown as Crypto;
  const keys = (await crypto.subtle.generateKey(RSA, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = opts.notBefore ?? new Date(Date.now() - 86_400_000);
  const notAfter = opts.notAfter ?? new Date(notBefore.getTime() + (opts.days ?? 3650) * 86_400_000);
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1'),
      name: `CN=${commonName.replace(/[,=+<>#;"\\]/g, ' ')}`,
      notBefore,
      notAfter,
      signingAlgorithm: RSA,
      keys,
    },
    crypto,
  );
  return { privateKey: pem('PRIVATE KEY', await crypto.subtle.exportKey('pkcs8', keys.privateKey)), certificate: cert.toString('pem') + '\n' };
}

const KEY_SETTING = 'saml_sp_private_key';
const CERT_SETTING = 'saml_sp_certificate';
const cache = new WeakMap<Db, Promise<KeyAndCertificate>>();

async function loadOrCreate(db: Db): Promise<KeyAndCertificate> {
  const read = async () => {
    const byKey = await readSettings(db, [KEY_SETTING, CERT_SETTING]);
    const privateKey = byKey.get(KEY_SETTING);
    const certificate = byKey.get(CERT_SETTING);
    return privateKey && certificate ? { privateKey, certificate } : undefined;
  };
  const existing = await read();
  if (existing) return existing;
  const made = await selfSignedCertificate('Folio SAML service provider', { days: 3650 });
  // Two processes may race here: one pair wins (inserted together), both then read it.
  // The certificate is written only by whoever wrote the key, so the two always match.
  await db.transaction().execute(async (trx) => {
    if (await insertSettingIfAbsent(trx, KEY_SETTING, made.privateKey)) await insertSettingIfAbsent(trx, CERT_SETTING, made.certificate);
  });
  const stored = await read();
  if (!stored) throw new Error('SAML service provider key could not be stored');
  return stored;
}

/**
 * The key Folio signs its authentication requests with, and its certificate (published in the SP
 * metadata). Made on first use and kept in the `settings` table, shared by every process.
 */
export function serviceProviderKey(db: Db): Promise<KeyAndCertificate> {
  let entry = cache.get(db);
  if (!entry) {
    entry = loadOrCreate(db);
    entry.catch(() => cache.delete(db));
    cache.set(db, entry);
  }
  return entry;
}
