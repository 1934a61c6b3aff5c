import { useState, type FormEvent } from "react";
import { ok } from "@keyward/client";
import { apiClient } from "../api";
import { Button, ErrorBanner, Field } from "../ui/components";

/**
 * The second step of a single sign-on whose e-mail belongs to a person another organization knows:
 * the server mailed that address a code, and this browser (its proof cookie) posts it back. On the
 * right code the server sets the session cookie and names the page to open next.
 */
export const EmailCodeForm = ({ orgSlug }: { orgSlug: string }) => {
  const [code, setCode] = useState("");
  const [fieldError, setFieldError] = useState<string | undefined>();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const value = code.replace(/\s+/g, "");
    if (!/^\d{8}$/.test(value)) return setFieldError("The code is the eight digits in the e-mail");
    setFieldError(undefined);
    setError(null);
    setBusy(true);
    try {
      const { redirectTo } = await ok(apiClient().sso.verifyEmailCode({ body: { code: value } }));
      window.location.assign(redirectTo);
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };

  return (
    <main className="signin" id="main">
      <form className="card signin-card" onSubmit={(event) => void submit(event)} noValidate>
        <h1>Check your e-mail</h1>
        <p className="muted small">
          This address already has a Keyward account in another organization. To sign in to{" "}
          {orgSlug || "this organization"} with it, enter the code we sent to it. The code expires in 10 minutes.
        </p>
        <Field
          label="Code"
          name="code"
          inputMode="numeric"
          autoComplete="one-time-code"
          maxLength={9}
          value={code}
          onChange={(e) => setCode(e.target.value)}
          error={fieldError}
        />
        <ErrorBanner error={error} />
        <Button type="submit" disabled={busy}>
          {busy ? "Checking…" : "Continue"}
        </Button>
        <p className="muted small">
          <a href={`/login${orgSlug ? `?org=${encodeURIComponent(orgSlug)}` : ""}`}>Start again</a>
        </p>
      </form>
    </main>
  );
};
