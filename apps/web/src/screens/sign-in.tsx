import { useEffect, useState, type FormEvent } from "react";
import { contract } from "@keyward/contract";
import { ok } from "@keyward/client";
import { apiClient } from "../api";
import { useSession } from "../session";
import { Button, ErrorBanner, Field } from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";
import { SetUp } from "./set-up";

type Mode = "universal" | "token";

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

/** The sign-in form, or the set-up form on an instance nobody has set up (no sign-in could pass there). */
export const SignIn = () => (useInstanceInitialized() === false ? <SetUp /> : <SignInForm />);

const SignInForm = () => {
  const { signIn, notice } = useSession();
  const [mode, setMode] = useState<Mode>("universal");
  const [clientId, setClientId] = useState("");
  const [clientSecret, setClientSecret] = useState("");
  const [token, setToken] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
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
        });
      } else {
        const value = token.trim();
        if (!value) return setErrors({ token: "Access token is required" });
        setErrors({});
        // Proves the token works before the console opens on it.
        await ok(apiClient(value).projects.list({ query: {} }));
        signIn({ token: value, expiresAt: null });
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
        {mode === "universal" ? (
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
          {busy ? "Signing in…" : "Sign in"}
        </Button>
        <p className="muted small">The token stays in this browser tab only and is forgotten when you sign out.</p>
      </form>
    </main>
  );
};
