/**
 * Test clients of the provider. Each gets a JWT access token by client credentials; the token's
 * `sub` is the client id, its `aud` the requested resource, and these extra claims are added.
 */
export const OIDC_TEST_CLIENTS = {
  "deploy-bot": {
    secret: "deploy-bot-secret",
    claims: { team: "platform", groups: ["admins", "dev"], env: { name: "prod" } },
  },
  "build-bot": { secret: "build-bot-secret", claims: { team: "qa", groups: ["dev"], env: { name: "staging" } } },
} as const;
