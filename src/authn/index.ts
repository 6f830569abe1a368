export type { Authenticator, AuthenticationResult, Credentials, PeerCertificate, RequestHeaders, TokenAuthenticator } from './types';
export { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, anonymousUser, withAuthenticatedGroup } from './users';
export { authenticateCertificate } from './x509';
export { TokenFileError, parseTokenFile, tokenFileAuthenticator, type TokenFile } from './token-file';
export {
  BOOTSTRAP_GROUP,
  BOOTSTRAP_USER_PREFIX,
  bootstrapTokenAuthenticator,
  secretData,
  type BootstrapTokenOptions,
  type SecretReader,
} from './bootstrap-token';
export { createAuthenticator, type AuthenticatorOptions } from './chain';
export { requestHeaderAuthenticator, unescapeExtraKey, type RequestHeaderAuthenticator, type RequestHeaderOptions } from './request-header';
export { describePeer, parseCaBundle, verifyLeaf } from './peer-certificate';
export { tokenReviewHandler, type TokenReviewOptions } from './token-review';
export {
  SERVICE_ACCOUNT_PREFIX,
  keyIdOf,
  keysOfPem,
  serviceAccountAuthenticator,
  tokenRequestHandler,
  type ObjectReader,
  type ServiceAccountTokenOptions,
} from './service-account';
export {
  DISCOVERY_CACHE_CONTROL,
  JWKS_MEDIA_TYPE,
  JWKS_PATH,
  OPENID_CONFIGURATION_PATH,
  issuerDiscoveryProvider,
  renderIssuerDiscovery,
  type IssuerDiscovery,
} from './service-account-discovery';
export { oidcAuthenticator, type OidcAuthenticator, type OidcOptions } from './oidc';
export { readWebhookConfig, webhookTokenAuthenticator, type WebhookClientConfig, type WebhookOptions } from './webhook';
export {
  AuthenticationConfigError,
  parseAuthenticationConfig,
  structuredAuthenticator,
  type AuthenticationConfig,
  type ReloadStatus,
  type StructuredAuthenticator,
} from './structured-config';
