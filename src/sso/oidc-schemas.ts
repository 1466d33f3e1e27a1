import { Type } from '@sinclair/typebox';
import { RoleOrGuest, Timestamp } from '../platform/schemas.ts';
import { Team } from '../teams/schemas.ts';
import { SamlLabel } from './schemas.ts';

/**
 * OpenID Connect providers: a Folio extension beside the official SAML provider operations (the
 * GitBook API has none for OIDC), shaped like them.
 */

const Issuer = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Issuer identifier of the OpenID provider (https; http only for a loopback host). Folio reads its /.well-known/openid-configuration.',
});
const ClientId = Type.String({ minLength: 1, maxLength: 1024, description: 'The client id Folio is registered with at the provider' });
const ClientSecret = Type.Union([Type.String({ minLength: 1, maxLength: 4096 }), Type.Null()], {
  description: 'The client secret (stored encrypted, never returned); null for a public client (PKCE only)',
});

const providerFields = {
  issuer: Type.Optional(Issuer),
  clientID: Type.Optional(ClientId),
  clientSecret: Type.Optional(ClientSecret),
  enabled: Type.Optional(Type.Boolean({ description: 'Offered on the sign-in page and accepted at its callback (default true)' })),
  defaultTeam: Type.Optional(Type.String({ maxLength: 100, description: 'A team of the organization that users signing in join' })),
  defaultRole: Type.Optional(RoleOrGuest),
};

export const CreateOidcProviderBody = Type.Object({ label: SamlLabel, ...providerFields }, { additionalProperties: false });
export const UpdateOidcProviderBody = Type.Object({ label: Type.Optional(SamlLabel), ...providerFields }, { additionalProperties: false });

export const OidcProvider = Type.Object({
  object: Type.Literal('oidc-provider'),
  id: Type.String(),
  label: Type.String(),
  issuer: Type.String({ description: 'Issuer identifier; empty until set' }),
  clientID: Type.String({ description: 'Client id; empty until set' }),
  clientSecretSet: Type.Boolean({ description: 'Whether a client secret is stored (it is never shown)' }),
  enabled: Type.Boolean(),
  defaultTeam: Type.Optional(Team),
  defaultRole: RoleOrGuest,
  createdAt: Timestamp,
  status: Type.String({ enum: ['active', 'pending', 'disabled'], description: 'pending until issuer and clientID are set; disabled when enabled is false; active otherwise' }),
  service: Type.Object({
    redirectURI: Type.String({ description: 'The redirect URI (callback) to register at the provider' }),
    startURL: Type.String({ description: 'Opening it starts a sign-in through this provider' }),
  }),
  urls: Type.Object({ location: Type.String() }),
});

export const OidcProviderParams = Type.Object({
  organizationId: Type.String({ maxLength: 100 }),
  oidcProviderId: Type.String({ maxLength: 100 }),
});
