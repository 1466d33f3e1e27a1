import type { Static } from '@sinclair/typebox';
import type { ApiTokenInfo } from '../platform/auth.ts';
import type { ApiToken } from './schemas.ts';

/** A token row as the API shows it (`current`: it is the token of the request being answered). */
export function presentToken(row: ApiTokenInfo, currentTokenId?: string): Static<typeof ApiToken> {
  return {
    object: 'api-token',
    id: row.id,
    ...(row.name !== null ? { name: row.name } : {}),
    createdAt: row.created_at.toISOString(),
    ...(row.expires_at ? { expiresAt: row.expires_at.toISOString() } : {}),
    ...(row.revoked_at ? { revokedAt: row.revoked_at.toISOString() } : {}),
    ...(currentTokenId !== undefined ? { current: row.id === currentTokenId } : {}),
  };
}
