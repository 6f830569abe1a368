export type { Authenticator, AuthenticationResult, Credentials, PeerCertificate, TokenAuthenticator } from './types';
export { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, anonymousUser, withAuthenticatedGroup } from './users';
export { authenticateCertificate } from './x509';
export { TokenFileError, parseTokenFile, tokenFileAuthenticator, type TokenFile } from './token-file';
export { BOOTSTRAP_GROUP, BOOTSTRAP_USER_PREFIX, bootstrapTokenAuthenticator, type BootstrapTokenOptions, type SecretReader } from './bootstrap-token';
export { createAuthenticator, type AuthenticatorOptions } from './chain';
export { describePeer, parseCaBundle, verifyLeaf } from './peer-certificate';
export { tokenReviewHandler, type TokenReviewOptions } from './token-review';
export { SERVICE_ACCOUNT_PREFIX, keysOfPem, serviceAccountAuthenticator, tokenRequestHandler, type ObjectReader, type ServiceAccountTokenOptions } from './service-account';
