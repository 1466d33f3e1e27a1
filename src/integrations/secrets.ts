import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Keys derived from the server's signing key (the `jwt_signing_key` setting, created on first
 * start): one encrypts integration secrets at rest (AES-256-GCM), one signs what Folio sends to
 * integrations. Each purpose gets its own key (HKDF), so none can stand in for another.
 */
function derive(serverKey: Uint8Array, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', serverKey, Buffer.alloc(0), `folio integrations ${purpose}`, 32));
}

export function encryptSecrets(serverKey: Uint8Array, secrets: Record<string, string>): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', derive(serverKey, 'secrets'), iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join('.');
}

export function decryptSecrets(serverKey: Uint8Array, sealed: string | null): Record<string, string> {
  if (!sealed) return {};
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('Unknown format of stored integration secrets');
  const decipher = createDecipheriv('aes-256-gcm', derive(serverKey, 'secrets'), Buffer.from(iv, 'base64'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  const text = Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  return JSON.parse(text) as Record<string, string>;
}

/** The secret an integration verifies Folio's requests with (`environment.signingSecrets.integration`). */
export function integrationSigningSecret(serverKey: Uint8Array, integrationId: string): string {
  return createHmac('sha256', derive(serverKey, 'signing')).update(integrationId).digest('hex');
}

/** Header value `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` sent with events to a dev tunnel. */
export function signatureHeader(secret: string, body: Uint8Array, at = Date.now()): string {
  const t = Math.floor(at / 1000);
  const mac = createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
  return `t=${t},v1=${mac}`;
}

export const SIGNATURE_HEADER = 'x-folio-signature';
