// The OpenID Connect conversation (openid-client): discovery, the authorization URL with PKCE + state + nonce, the code
// exchange, the refresh used by the re-check, and the provider's logout URL. No database here.
import * as oidc from 'openid-client';
import { oidcRedirectUrl, type OidcConfig } from '../../config/oidc-config';

/** The provider could not be asked (down, timed out, bad discovery document): not the user's fault. */
export class ProviderUnavailableError extends Error {}

/** The provider answered, but the answer proves nothing (wrong state, bad token, code refused...): a failed sign-in. */
export class ProviderRefusedError extends Error {}

/** What the provider says about a user, reduced to what the mapping and the user record need. */
export interface ProviderUser {
  subject: string;
  username: string | null;
  displayName: string | null;
  email: string | null;
  groups: string[];
}

export interface ProviderTokens {
  user: ProviderUser;
  idToken: string | null;
  refreshToken: string | null;
}

/** What the browser carries between the start of a sign-in and the callback (kept server-side, never in the URL). */
export interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
}

// A discovery document is re-read after this long, so a provider's rotated endpoints are picked up without a restart.
const DISCOVERY_TTL_MS = 60 * 60_000;
const MAX_GROUPS = 500;

interface ErrorLike {
  code?: string;
  name?: string;
  message?: string;
  error?: string;
  error_description?: string;
  cause?: unknown;
}

/** Sort a failure: the network or a broken provider (unavailable), or an answer that proves nothing (refused). */
function providerError(err: unknown): Error {
  // openid-client wraps the protocol library's error, which may wrap fetch's, which wraps the socket's.
  const chain: ErrorLike[] = [];
  for (let e = err as ErrorLike | undefined; e && typeof e === 'object' && chain.length < 5; e = e.cause as ErrorLike | undefined) chain.push(e);
  const network = chain.find(
    (e) => e.name === 'TimeoutError' || e.name === 'AbortError' || e.message === 'fetch failed' || /^(E[A-Z]{3,}|UND_ERR)/.test(e.code ?? ''),
  );
  const oauth = chain.find((e) => e.error !== undefined) ?? chain.findLast((e) => (e.code ?? '').startsWith('OAUTH_')) ?? chain[0] ?? {};
  const msg = (oauth.error ? `${oauth.error}${oauth.error_description ? `: ${oauth.error_description}` : ''}` : (oauth.message ?? ''))
    .split('\n')[0]
    .slice(0, 200);
  if (network || oauth.code === 'OAUTH_RESPONSE_IS_NOT_CONFORM') {
    const code = chain.map((e) => e.code).findLast((c) => c !== undefined) ?? network?.name ?? 'error';
    return new ProviderUnavailableError(`the identity provider cannot be reached (${code}: ${msg})`);
  }
  return new ProviderRefusedError(msg || (oauth.code ?? 'refused'));
}

function asStrings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string').slice(0, MAX_GROUPS);
  return [];
}

function asString(v: unknown): string | null {
  return typeof v === 'string' && v.length > 0 ? v.slice(0, 256) : null;
}

/** The claims the configuration names, read from an ID token's and (where given) the userinfo response's claims. */
export function userFromClaims(cfg: OidcConfig, claims: Record<string, unknown>): ProviderUser {
  return {
    subject: typeof claims.sub === 'string' ? claims.sub : '',
    username: asString(claims[cfg.username_claim]),
    displayName: asString(claims[cfg.name_claim]),
    email: asString(claims[cfg.email_claim]),
    groups: asStrings(claims[cfg.groups_claim]),
  };
}

/** One provider, discovered lazily and re-discovered hourly or after a failure; one per door (web sign-in, re-check). */
export class OidcProvider {
  private discovered: { at: number; config: oidc.Configuration } | null = null;

  constructor(
    private readonly cfg: OidcConfig,
    /** The client secret (from the encrypted store), read when discovery runs; null for client_auth = "none". */
    private readonly secret: () => string | null,
  ) {}

  async configuration(now = Date.now()): Promise<oidc.Configuration> {
    if (this.discovered && now - this.discovered.at < DISCOVERY_TTL_MS) return this.discovered.config;
    const secret = this.secret();
    if (this.cfg.client_auth !== 'none' && !secret) {
      throw new ProviderUnavailableError('no client secret is stored: run `confvault auth set-oidc-secret` (or set client_auth = "none")');
    }
    const auth =
      this.cfg.client_auth === 'none'
        ? oidc.None()
        : this.cfg.client_auth === 'client_secret_post'
          ? oidc.ClientSecretPost(secret!)
          : oidc.ClientSecretBasic(secret!);
    try {
      const config = await oidc.discovery(new URL(this.cfg.issuer), this.cfg.client_id, undefined, auth, {
        execute: this.cfg.allow_http ? [oidc.allowInsecureRequests] : [],
        timeout: this.cfg.timeout_seconds,
      });
      this.discovered = { at: now, config };
      return config;
    } catch (err) {
      const e = providerError(err);
      throw e instanceof ProviderUnavailableError ? e : new ProviderUnavailableError(`discovery failed: ${e.message}`);
    }
  }

  /** The provider's address to send the browser to, and what the callback must find again. */
  async startSignIn(): Promise<{ url: string; pending: PendingSignIn }> {
    const config = await this.configuration();
    const pending = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier() };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: oidcRedirectUrl(this.cfg),
      scope: this.cfg.scopes.join(' '),
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, pending };
  }

  /** Exchange the callback's code (state, nonce and PKCE checked) for tokens and the user's claims. */
  async finishSignIn(callbackQuery: string, pending: PendingSignIn): Promise<ProviderTokens> {
    const config = await this.configuration();
    const current = new URL(oidcRedirectUrl(this.cfg));
    current.search = callbackQuery;
    try {
      const tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      return await this.tokensToUser(config, tokens, null);
    } catch (err) {
      if (err instanceof ProviderRefusedError || err instanceof ProviderUnavailableError) throw err;
      throw providerError(err);
    }
  }

  /** Redeem a refresh token (the re-check): the user's current claims, or ProviderRefusedError when the provider says no. */
  async refresh(refreshToken: string, subject: string): Promise<ProviderTokens> {
    const config = await this.configuration();
    try {
      const tokens = await oidc.refreshTokenGrant(config, refreshToken);
      const result = await this.tokensToUser(config, tokens, subject);
      return { ...result, refreshToken: result.refreshToken ?? refreshToken };
    } catch (err) {
      if (err instanceof ProviderRefusedError || err instanceof ProviderUnavailableError) throw err;
      throw providerError(err);
    }
  }

  /** The provider's logout address for a user (null: it has none, or it cannot be reached now). */
  async endSessionUrl(idToken: string | null): Promise<string | null> {
    try {
      const config = await this.configuration();
      if (!config.serverMetadata().end_session_endpoint) return null;
      const params: Record<string, string> = { post_logout_redirect_uri: `${this.cfg.public_url.replace(/\/+$/, '')}/login` };
      if (idToken) params.id_token_hint = idToken;
      return oidc.buildEndSessionUrl(config, params).href;
    } catch {
      return null;
    }
  }

  private async tokensToUser(
    config: oidc.Configuration,
    tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers,
    expectedSubject: string | null,
  ): Promise<ProviderTokens> {
    const idClaims = tokens.claims() as Record<string, unknown> | undefined;
    const subject = (idClaims?.sub as string | undefined) ?? expectedSubject;
    if (!subject) throw new ProviderRefusedError('the provider returned no subject');
    if (expectedSubject && subject !== expectedSubject) throw new ProviderRefusedError('the refreshed ID token names another subject');
    let claims: Record<string, unknown> = { ...idClaims, sub: subject };
    // Groups or the username often travel only in the userinfo response (Keycloak without a mapper in the ID token).
    const missing = !idClaims || claims[this.cfg.groups_claim] === undefined || claims[this.cfg.username_claim] === undefined;
    if (missing && config.serverMetadata().userinfo_endpoint) {
      const info = (await oidc.fetchUserInfo(config, tokens.access_token, subject)) as Record<string, unknown>;
      claims = { ...info, ...claims };
    }
    return { user: userFromClaims(this.cfg, claims), idToken: tokens.id_token ?? null, refreshToken: tokens.refresh_token ?? null };
  }
}
