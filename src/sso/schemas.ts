import { Type } from '@sinclair/typebox';
import { RoleOrGuest, Timestamp } from '../platform/schemas.ts';
import { Team } from '../teams/schemas.ts';

export const SamlLabel = Type.String({ minLength: 1, maxLength: 30, pattern: '\\S', description: 'Name shown on the login page (1 to 30 characters)' });
const EntityId = Type.String({ minLength: 1, maxLength: 1024, description: "The identity provider's entity id (Issuer of its responses)" });
const Certificate = Type.String({
  minLength: 1,
  maxLength: 10000,
  description: "The identity provider's signing certificate: PEM, or the bare base64 of its DER form. Must parse and be valid now.",
});
const SsoUrl = Type.String({ maxLength: 2048, format: 'uri', description: 'Single sign-on URL of the identity provider (HTTP-Redirect binding), http or https' });

const providerFields = {
  entityID: Type.Optional(EntityId),
  certificate: Type.Optional(Certificate),
  ssoURL: Type.Optional(SsoUrl),
  defaultTeam: Type.Optional(Type.String({ maxLength: 100, description: 'A team of the organization that users signing in join' })),
  defaultRole: Type.Optional(RoleOrGuest),
};

export const CreateSamlProviderBody = Type.Object({ label: SamlLabel, ...providerFields });
export const UpdateSamlProviderBody = Type.Object({ label: Type.Optional(SamlLabel), ...providerFields });

export const SamlProvider = Type.Object({
  object: Type.Literal('saml-provider'),
  id: Type.String(),
  label: Type.String(),
  ssoURL: Type.String({ description: 'Single sign-on URL of the identity provider; about:blank until set' }),
  entityID: Type.String({ description: "The identity provider's entity id; empty until set" }),
  certificate: Type.String({ description: "The identity provider's signing certificate (PEM); empty until set" }),
  defaultTeam: Type.Optional(Team),
  defaultRole: RoleOrGuest,
  createdAt: Timestamp,
  status: Type.String({ enum: ['active', 'pending'], description: 'pending until entityID, certificate and ssoURL are all set; active after' }),
  service: Type.Object({
    acsURL: Type.String({ description: 'Assertion Consumer Service URL (HTTP-POST binding) to give the identity provider' }),
    startURL: Type.String({ description: 'Opening it starts a login through this provider' }),
    entityID: Type.String({ description: "Folio's entity id for this provider (also the URL of its SP metadata XML)" }),
  }),
  urls: Type.Object({ location: Type.String() }),
});

export const SsoLogin = Type.Object({
  id: Type.String(),
  label: Type.String(),
  startURL: Type.String({ description: 'Opening it starts a login through this provider' }),
});

export const SamlProviderParams = Type.Object({
  organizationId: Type.String({ maxLength: 100 }),
  samlProviderId: Type.String({ maxLength: 100 }),
});
