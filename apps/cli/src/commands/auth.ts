import { Command, Option } from "commander";
import { call, connect, connectTo } from "../api";
import {
  baseUrlOf,
  CliError,
  readProfile,
  removeProfile,
  resolveConnection,
  writeProfile,
  type Profile,
} from "../config";
import { cliEnv } from "../env";
import { printJson } from "../output";
import { loginAsPerson } from "../person-login";
import { isPersonProfile, isSessionToken, jwtExpiry, postWithRefreshCookie, renewSession } from "../session";

type LoginOptions = {
  method?: "universal-auth" | "token";
  org?: string;
  browser: boolean;
  url?: string;
  clientId?: string;
  clientSecret?: string;
  token?: string;
};

export const loginCommand = () =>
  new Command("login")
    .description(
      "log in and store a profile (mode 0600) under the config directory: without --method, sign in as a person in the browser",
    )
    .addOption(
      new Option("--method <method>", "log in as a machine identity instead of a person").choices([
        "universal-auth",
        "token",
      ]),
    )
    .option("--url <url>", "Keyward URL (default: KEYWARD_URL or the stored profile's)")
    .option("--org <slug>", "the organization to sign in to (a person; asked when not given)")
    .option("--no-browser", "do not wait for the browser: print the sign-in address and read the code it shows")
    .option("--client-id <id>", "universal auth client id")
    .option("--client-secret <secret>", "universal auth client secret")
    .option("--token <token>", "an access token (method token; default: KEYWARD_TOKEN)")
    .action(async (opts: LoginOptions) => {
      const given = opts.url ?? cliEnv().url ?? readProfile()?.url;
      if (!given) throw new CliError("Give --url or set KEYWARD_URL");
      const url = baseUrlOf(
        given,
        opts.url !== undefined ? "--url" : cliEnv().url !== undefined ? "KEYWARD_URL" : "The stored profile's url",
      );
      if (opts.method === undefined) return loginAsPerson(url, opts);
      const api = connectTo(url);
      if (opts.method === "universal-auth") {
        const { clientId, clientSecret } = opts;
        if (!clientId || !clientSecret) throw new CliError("universal-auth needs --client-id and --client-secret");
        const login = await call(
          api,
          (client) => client.universalAuth.login({ body: { clientId, clientSecret } }),
          "Universal auth login",
        );
        writeProfile({
          url,
          token: login.accessToken,
          method: "universal-auth",
          clientId: opts.clientId,
          loggedInAt: new Date().toISOString(),
        });
        process.stderr.write(`Logged in with universal auth; the token expires in ${login.expiresIn} s\n`);
        return;
      }
      const token = opts.token ?? cliEnv().token;
      if (!token) throw new CliError("token login needs --token or KEYWARD_TOKEN");
      // Prove the token works before storing it.
      await call(connectTo(url, token), (client) => client.accessTokens.self());
      writeProfile({ url, token, method: "token", loggedInAt: new Date().toISOString() });
      process.stderr.write("Logged in with an access token\n");
    });

export const logoutCommand = () =>
  new Command("logout")
    .description("forget the stored profile; a person's session is also ended on the server")
    .action(async () => {
      const profile = readProfile();
      if (isPersonProfile(profile)) {
        const response = await postWithRefreshCookie(profile.url, "/api/v1/auth/logout", profile.refreshToken);
        // 401: the session had already ended; either way nothing stored works any more.
        if (!response.ok && response.status !== 401) {
          throw new CliError(
            `Signing out failed (${response.status}); the session is still stored: run \`keyward logout\` again`,
          );
        }
      }
      process.stderr.write(removeProfile() ? "Logged out\n" : "No stored profile\n");
    });

const NEVER_EXPIRES = "this token does not expire; treat it as a master key and revoke it when replaced";

const expiryLine = (info: {
  neverExpires: boolean;
  expiresAt: string | null;
  maxExpiresAt: string | null;
  uses: { limit: number };
}) => {
  if (info.neverExpires) return `expires: never (${NEVER_EXPIRES})`;
  if (info.expiresAt === null) return `expires: when its ${info.uses.limit} uses are spent (no TTL)`;
  return `expires: ${info.expiresAt}${info.maxExpiresAt ? ` (renewable until ${info.maxExpiresAt})` : ""}`;
};

/** A person's session: who they are (the server says), the organization they signed in to, and its expiry. */
const whoamiPerson = async (url: string, tokenSource: string, profile: Profile | undefined, output: string) => {
  const api = await connect();
  const { user } = await call(api, (client) => client.users.me());
  const stored = tokenSource === "profile" ? readProfile() : undefined;
  const exp = jwtExpiry(stored?.token ?? cliEnv().token ?? "");
  const info = {
    url,
    tokenSource,
    person: { id: user.id, email: user.email, firstName: user.firstName, lastName: user.lastName },
    organization: tokenSource === "profile" ? (profile?.organization ?? null) : null,
    authMethod: "session",
    expiresAt: exp === undefined ? null : new Date(exp * 1000).toISOString(),
    renewedAutomatically: tokenSource === "profile",
  };
  if (output === "json") return printJson(info);
  const name = `${user.firstName} ${user.lastName}`.trim();
  const lines = [
    `url: ${info.url}`,
    `token from: ${info.tokenSource}`,
    `person: ${user.email}${name ? ` (${name})` : ""}`,
    ...(info.organization ? [`organization: ${info.organization}`] : []),
    "auth method: a person's session (single sign-on)",
    `access token expires: ${info.expiresAt ?? "unknown"}${info.renewedAutomatically ? " (renewed automatically)" : ""}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
};

export const whoamiCommand = () =>
  new Command("whoami")
    .description("show who the token belongs to, how it was issued and when it expires")
    .addOption(new Option("--output <format>", "output format").choices(["text", "json"]).default("text"))
    .action(async (opts: { output: string }) => {
      const { url, token, profile, tokenSource } = resolveConnection();
      if (isSessionToken(token!)) return whoamiPerson(url, tokenSource, profile, opts.output);
      const self = await call(await connect(), (client) => client.accessTokens.self());
      const info = {
        url,
        tokenSource,
        identity: self.identity,
        organization: self.organization,
        authMethod: self.token.authMethod,
        clientId: tokenSource === "profile" ? profile?.clientId : undefined,
        tokenId: self.token.id,
        expiresAt: self.token.expiresAt,
        // A token without TTL or use limit (the bootstrap token, Token Auth with TTL 0) works until revoked.
        neverExpires: self.token.expiresAt === null && self.token.accessTokenNumUsesLimit === 0,
        maxExpiresAt: self.token.maxExpiresAt,
        uses: { used: self.token.accessTokenNumUses, limit: self.token.accessTokenNumUsesLimit },
      };
      if (opts.output === "json") return printJson(info);
      const lines = [
        `url: ${info.url}`,
        `token from: ${info.tokenSource}`,
        `identity: ${info.identity.name} (${info.identity.id})`,
        `organization: ${info.organization.name} (${info.organization.slug})`,
        `auth method: ${info.authMethod}`,
        ...(info.clientId ? [`client id: ${info.clientId}`] : []),
        expiryLine(info),
        `uses: ${info.uses.used}${info.uses.limit > 0 ? ` of ${info.uses.limit}` : " (no limit)"}`,
      ];
      process.stdout.write(`${lines.join("\n")}\n`);
    });

const currentToken = () => {
  const { token } = resolveConnection();
  return token!;
};

export const tokenCommand = () => {
  const token = new Command("token").description("renew or revoke the current access token");
  token
    .command("renew")
    .description("restart the token's TTL (bounded by its max TTL)")
    .addOption(new Option("--output <format>", "output format").choices(["text", "json"]).default("text"))
    .action(async (opts: { output: string }) => {
      const { profile, tokenSource } = resolveConnection();
      if (tokenSource === "profile" && isPersonProfile(profile)) {
        // A person's session: a new access token (and refresh token) now.
        const exp = jwtExpiry((await renewSession(profile.token)).token);
        const expiresIn = exp === undefined ? null : Math.max(0, exp - Math.floor(Date.now() / 1000));
        if (opts.output === "json") return printJson({ expiresIn });
        process.stdout.write(`renewed; expires in ${expiresIn ?? "?"} s\n`);
        return;
      }
      const renewed = await call(await connect(), (client) =>
        client.accessTokens.renew({ body: { accessToken: currentToken() } }),
      );
      if (opts.output === "json")
        return printJson({ expiresIn: renewed.expiresIn, accessTokenMaxTTL: renewed.accessTokenMaxTTL });
      process.stdout.write(`renewed; expires in ${renewed.expiresIn} s\n`);
    });
  token
    .command("revoke")
    .description("revoke the token; it stops working at once and the stored profile is removed")
    .action(async () => {
      const { tokenSource, profile } = resolveConnection();
      if (tokenSource === "profile" && isPersonProfile(profile)) {
        throw new CliError("This is a person's session: end it with `keyward logout`");
      }
      await call(await connect(), (client) => client.accessTokens.revoke({ body: { accessToken: currentToken() } }));
      if (tokenSource === "profile") removeProfile();
      process.stderr.write("Token revoked\n");
    });
  return token;
};
