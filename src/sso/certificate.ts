import { X509Certificate } from 'node:crypto';
import { BadRequestError } from '../platform/errors.ts';

/**
 * Reads an identity provider's certificate given as PEM or as the bare base64 of its DER form
 * (what IdP consoles show), and returns it as PEM. A value that is not one X.509 certificate, or
 * one that is not valid now (expired, or not yet valid), is refused with a 400 that says so.
 */
export function normalizeCertificate(input: string, now = new Date()): string {
  const text = input.trim();
  let body: string;
  const pem = /^-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----$/.exec(text);
  if (pem) body = pem[1]!;
  else if (text.startsWith('-----BEGIN')) {
    throw new BadRequestError('certificate: expected an X.509 certificate (-----BEGIN CERTIFICATE-----), not another kind of PEM block such as a key');
  } else body = text;
  const base64 = body.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) {
    throw new BadRequestError('certificate: not a PEM certificate nor base64 text');
  }
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(Buffer.from(base64, 'base64'));
  } catch {
    throw new BadRequestError('certificate: does not parse as an X.509 certificate');
  }
  const validFrom = new Date(cert.validFrom);
  const validTo = new Date(cert.validTo);
  if (validTo <= now) throw new BadRequestError(`certificate: expired on ${validTo.toISOString()}; ask the identity provider for its current signing certificate`);
  if (validFrom > now) throw new BadRequestError(`certificate: not valid before ${validFrom.toISOString()}`);
  const lines = cert.raw.toString('base64').match(/.{1,64}/g)!;
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
