import { useEffect, useState, type FormEvent } from "react";
import { contract } from "@keyward/contract";
import { ok } from "@keyward/client";
import { apiClient } from "../api";
import { returnAfterSignIn, useSession } from "../session";
import { useLocation } from "../router";
import { isCliHandoff } from "../cli-handoff";
import { Button, ErrorBanner, Field } from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";
import { EmailCodeForm } from "./email-code";
import { SetUp } from "./set-up";

type Mode = "sso" | "universal" | "token";

/**
 * Where single sign-on starts: the server's login route for the organization. A sign-in begun by a
 * command line (`/login/cli?callback_port=…` or `/login?callback_port=…`) carries its listener's port
 * (and `keyward login`'s state) through, so the server returns the browser to the page that hands the
 * session over; any other page is remembered and reopened afterwards.
 */
export const startSingleSignOn = (orgSlug: string) => {
  const here = new URLSearchParams(window.location.search);
  const target = new URLSearchParams({ orgSlug });
  const port = isCliHandoff(window.location.pathname, here) ? here.get("callback_port") : null;
  if (port) {
    target.set("callbackPort", port);
    const state = here.get("callback_state");
    if (state) target.set("callbackState", state);
  } else if (window.location.pathname !== "/" && window.location.pathname !== "/login") {
    returnAfterSignIn(`${window.location.pathname}${window.location.search}`);
  }
  window.location.assign(`/api/v1/sso/oidc/login?${target.toString()}`);
};

/** Whether the instance is set up; undefined until known (or when the server cannot say). */
const useInstanceInitialized = () => {
  const [initialized, setInitialized] = useState<boolean | undefined>(undefined);
  useEffect(() => {
    let current = true;
    ok(apiClient().system.config()).then(
      (answer) => current && setInitialized(answer.config.initialized),
      () => current && setInitialized(undefined),
    );
    return () => {
      current = false;
    };
  }, []);
  return initialized;
};

/**
 * The sign-in form, the set-up form on an instance nobody has set up (no sign-in could pass there),
 * or the code form of a single sign-on that waits for the person to prove their e-mail address.
 */
export const SignIn = () => {
  const initialized = useInstanceInitialized();
  const { search } = useLocation();
  if (initialized === false) return <SetUp />;
  if (search.get("sso_verify") === "email") return <EmailCodeForm orgSlug={search.get("org") ?? ""} />;
  return <SignInForm />;
};

const SignInForm = () => {
  const { signIn, notice } = useSession();
  const { search } = useLocation();
  const [mode, setMode] = useState<Mode>("sso");
  const [orgSlug, setOrgSlug] = useState(() => search.get("org") ?? "");
  const [clientId, setClientId] = useState("");
  const [clientSecret, setClientSecret] = useState("");
  const [token, setToken] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  // Single sign-on that failed comes back here with its reason.
  const [error, setError] = useState<unknown>(() => search.get("sso_error"));
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      if (mode === "sso") {
        const slug = orgSlug.trim().toLowerCase();
        if (!slug) return setErrors({ orgSlug: "Organization is required" });
        if (!/^[a-z0-9-]+$/.test(slug))
          return setErrors({ orgSlug: "An organization slug is letters, digits and '-'" });
        setErrors({});
        startSingleSignOn(slug);
        return;
      }
      if (mode === "universal") {
        const checked = validate(contract.universalAuth.login.body, { clientId, clientSecret });
        if (checked.errors) return setErrors(checked.errors);
        if (!checked.data.clientId) return setErrors({ clientId: "Client ID is required" });
        if (!checked.data.clientSecret) return setErrors({ clientSecret: "Client secret is required" });
        setErrors({});
        const login = await ok(apiClient().universalAuth.login({ body: checked.data }));
        signIn({
          token: login.accessToken,
          expiresAt: login.expiresIn > 0 ? Date.now() + login.expiresIn * 1000 : null,
          kind: "machine",
        });
      } else {
        const value = token.trim();
        if (!value) return setErrors({ token: "Access token is required" });
        setErrors({});
        // Proves the token works before the console opens on it.
        await ok(apiClient(value).projects.list({ query: {} }));
        signIn({ token: value, expiresAt: null, kind: "machine" });
      }
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="signin" id="main">
      <form className="card signin-card" onSubmit={(event) => void submit(event)} noValidate>
        <h1>Sign in to Keyward</h1>
        {notice ? (
          <div className="banner banner-info" role="status">
            {notice}
          </div>
        ) : null}
        <div className="segmented" role="radiogroup" aria-label="Sign-in method">
          {(
            [
              ["sso", "Single sign-on"],
              ["universal", "Universal Auth"],
              ["token", "Access token"],
            ] as const
          ).map(([value, label]) => (
            <label key={value} className={mode === value ? "on" : undefined}>
              <input
                type="radio"
                name="mode"
                value={value}
                checked={mode === value}
                onChange={() => {
                  setMode(value);
                  setErrors({});
                  setError(null);
                }}
              />
              {label}
            </label>
          ))}
        </div>
        {mode === "sso" ? (
          <>
            <p className="muted small">Sign in with your organization&apos;s single sign-on.</p>
            <Field
              label="Organization"
              name="orgSlug"
              autoComplete="organization"
              value={orgSlug}
              onChange={(e) => setOrgSlug(e.target.value)}
              error={errors.orgSlug}
              hint={
                search.get("email")
                  ? `You were invited as ${search.get("email")}: sign in with that e-mail.`
                  : "The organization's slug, as in its invitation link."
              }
            />
          </>
        ) : mode === "universal" ? (
          <>
            <Field
              label="Client ID"
              name="clientId"
              autoComplete="username"
              value={clientId}
              onChange={(e) => setClientId(e.target.value)}
              error={errors.clientId}
            />
            <Field
              label="Client secret"
              name="clientSecret"
              type="password"
              autoComplete="current-password"
              value={clientSecret}
              onChange={(e) => setClientSecret(e.target.value)}
              error={errors.clientSecret}
            />
          </>
        ) : (
          <Field
            label="Token"
            name="token"
            type="password"
            autoComplete="off"
            value={token}
            onChange={(e) => setToken(e.target.value)}
            error={errors.token}
            hint="An identity access token (Token Auth or any login)."
          />
        )}
        <ErrorBanner error={error} />
        <Button type="submit" disabled={busy}>
          {mode === "sso" ? "Continue with single sign-on" : busy ? "Signing in…" : "Sign in"}
        </Button>
        <p className="muted small">
          {mode === "sso"
            ? "Your session is kept in an HttpOnly cookie; its access token lives only in this page's memory."
            : "The token stays in this browser tab only and is forgotten when you sign out."}
        </p>
      </form>
    </main>
  );
};
