// A real OpenID provider for toolgate's identity tests: the certified `oidc-provider` from npm
// (installed by scripts/test into target/identity-node), on an ephemeral loopback port.
//
// It prints one JSON line once it listens: {"issuer": ..., "port": ...}. It serves:
// - client credentials for the workload clients below, as JWT access tokens (RS256) whose
//   audience is the requested resource (`urn:toolgate` by default), with the client's roles
//   and actors as claims;
// - the authorization code flow (PKCE required) for people, through the provider's own
//   development login form (any password), with each person's roles in the ID token;
// - dynamic client registration, so that a test registers the console's redirect URI once
//   it knows its port.
//
// SIGUSR2 rotates the signing key without a restart: a new key signs from then on, the old
// one stays in the JWKS. SIGUSR1 does the same and drops the old keys (a key withdrawn). `ISSUER` makes it claim another provider's issuer while signing with
// keys of its own: a forger, for the tests of a token signed by an unknown key.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';

const clients = {
  'agent-1': { roles: ['agent'] },
  'agents-team-a': { roles: ['agent'], actors: ['team-a/*'] },
  auditor: { roles: ['auditor'] },
  gateway: { roles: ['gateway'] },
  'no-roles': { roles: [] },
  // Its tokens live one second.
  short: { roles: ['agent'], ttl: 1 },
  // The load generator's (`toolgate bench`, whose callers are agent-0, agent-1, …).
  bench: { roles: ['agent'], actors: ['agent-*'] },
  // A top-level claim literally named as the configured path, beside the nested one.
  'flat-realm': {
    roles: [],
    extra: { 'realm_access.roles': ['auditor'], realm_access: { roles: ['agent'] } },
  },
};
const people = {
  carol: { roles: ['approver'] },
  dave: { roles: ['auditor'] },
  erin: { roles: [] },
};

const keys = [];
async function newKey() {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  keys.unshift({ ...jwk, kid: randomUUID(), alg: 'RS256', use: 'sig' });
}

function provider(issuer) {
  const grants = new Map();
  const configuration = {
    clients: Object.keys(clients).map((id) => ({
      client_id: id,
      client_secret: `${id}-secret`,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
    })),
    jwks: { keys: [...keys] },
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'urn:toolgate',
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => ({
          scope: 'toolgate',
          audience: resource,
          accessTokenTTL: clients[client.clientId]?.ttl ?? 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    pkce: { required: () => true },
    // The ID token carries the person's roles (as Keycloak's and Entra's do), not only userinfo.
    conformIdTokenClaims: false,
    scopes: ['openid', 'profile', 'toolgate'],
    claims: { openid: ['sub'], profile: ['roles', 'name'] },
    async findAccount(ctx, sub) {
      if (!people[sub]) return undefined;
      return { accountId: sub, claims: async () => ({ sub, name: sub, roles: people[sub].roles }) };
    },
    async extraTokenClaims(ctx, token) {
      const who = clients[token.clientId] && !token.accountId
        ? clients[token.clientId]
        : people[token.accountId] ?? {};
      return {
        roles: who.roles ?? [],
        ...(who.actors ? { actors: who.actors } : {}),
        ...(who.extra ?? {}),
      };
    },
    // Consent is given: the tests sign people in, they do not test the provider's prompts.
    async loadExistingGrant(ctx) {
      const { client, session } = ctx.oidc;
      const key = `${client.clientId}:${session.accountId}`;
      let grant = grants.get(key) && (await ctx.oidc.provider.Grant.find(grants.get(key)));
      if (!grant) {
        grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
        grant.addOIDCScope('openid profile');
        grant.addOIDCClaims(['roles', 'name']);
        grant.addResourceScope('urn:toolgate', 'toolgate');
        grants.set(key, await grant.save());
      }
      return grant;
    },
  };
  const oidc = new Provider(issuer, configuration);
  oidc.on('server_error', (ctx, error) => console.error('provider error:', error));
  return oidc;
}

await newKey();
let current = null;
const server = http.createServer((req, res) => current.callback()(req, res));
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = process.env.ISSUER || `http://127.0.0.1:${port}`;
  current = provider(issuer);
  const rotate = (drop) => async () => {
    await newKey();
    if (drop) keys.splice(1);
    current = provider(issuer);
    console.log(JSON.stringify({ rotated: keys[0].kid }));
  };
  process.on('SIGUSR2', rotate(false));
  process.on('SIGUSR1', rotate(true));
  console.log(JSON.stringify({ issuer, port }));
});
