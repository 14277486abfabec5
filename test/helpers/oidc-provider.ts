// A real OpenID Connect provider (oidc-provider) on 127.0.0.1 for sign-in tests, with accounts whose claims a test changes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';
import { WebClient } from '../web/web-client';

export interface TestAccount {
  preferred_username: string;
  name?: string;
  email?: string;
  groups: string[];
}

export interface TestProvider {
  issuer: string;
  /** accountId → claims; read at every token and userinfo request, so a change shows at the next refresh. */
  accounts: Map<string, TestAccount>;
  /** accountIds given no refresh token (a provider, or a client, configured without them). */
  withoutRefresh: Set<string>;
  close(): Promise<void>;
}

export async function startTestProvider(client: { id: string; secret: string; publicUrl: string }): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = new Map<string, TestAccount>();
  const withoutRefresh = new Set<string>();
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: client.id,
        client_secret: client.secret,
        redirect_uris: [`${client.publicUrl}/login/oidc/callback`],
        post_logout_redirect_uris: [`${client.publicUrl}/login`],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'test', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: ['confvault-test-cookie-key'] },
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email'], groups: ['groups'] },
    scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, RefreshToken: 3600, IdToken: 600 },
    // As Keycloak does: a refresh token for every code grant of a client allowed to use them.
    issueRefreshToken: (_ctx: unknown, c: { grantTypeAllowed(type: string): boolean }, code: { accountId: string }) =>
      Promise.resolve(c.grantTypeAllowed('refresh_token') && !withoutRefresh.has(code.accountId)),
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    findAccount(_ctx: unknown, id: string) {
      const a = accounts.get(id);
      if (!a) return Promise.resolve(undefined);
      return Promise.resolve({ accountId: id, claims: () => Promise.resolve({ sub: id, ...accounts.get(id) }) });
    },
  });
  server.on('request', provider.callback());
  return {
    issuer,
    accounts,
    withoutRefresh,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A browser signing in at the provider: follows its redirects from `authUrl`, posts its login form (any password: the
 * provider's development forms) and its consent form, and returns the address it finally sends the browser back to.
 */
export async function signInAtProvider(issuer: string, authUrl: string, login: string): Promise<string> {
  const p = new WebClient(issuer);
  let next = authUrl;
  for (let step = 0; step < 12; step++) {
    if (!next.startsWith(issuer)) return next;
    const { res, html } = await p.get(next.slice(issuer.length));
    const location = res.headers.get('Location');
    if (location) {
      next = new URL(location, issuer).href;
      continue;
    }
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`the provider answered ${res.status} without a form: ${html.slice(0, 300)}`);
    const posted = await p.post(new URL(action, issuer).pathname, prompt === 'login' ? { prompt, login, password: 'any' } : { prompt });
    next = new URL(posted.res.headers.get('Location') ?? '', issuer).href;
  }
  throw new Error('the provider did not send the browser back within 12 steps');
}
