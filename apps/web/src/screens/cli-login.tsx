import { useEffect, useRef, useState } from "react";
import { useSession } from "../session";
import { useLocation } from "../router";
import { ErrorBanner, Loading } from "../ui/components";
import { SignIn, startSingleSignOn } from "./sign-in";

/**
 * What the command line waits for on its loopback listener (and decodes from the pasted code):
 * `keyward login`'s listener also checks its one-time `state`; an Infisical-compatible command line
 * sends none and reads the other four fields.
 */
type Handoff = { email: string; privateKey: ""; JTWToken: string; RefreshToken: string; state?: string };

type Outcome = { code: string; delivered: "yes" | "no" | "not-asked" | "sending"; error?: unknown };

const base64 = (text: string) => {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
};

/** A command-line session of its own, started from this browser's session (the refresh cookie). */
const startCliSession = async () => {
  const response = await fetch("/api/v1/auth/cli-session", { method: "POST", credentials: "same-origin" });
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as { message?: string } | null;
    throw new Error(body?.message ?? `Keyward answered HTTP ${response.status}`);
  }
  return (await response.json()) as { email: string; accessToken: string; refreshToken: string };
};

/**
 * `/login/cli` and `/login?callback_port=…`: signs the person in if needed, then hands the command
 * line a session. With `callback_port`, the session is POSTed as JSON to the listener on 127.0.0.1
 * (with `keyward login`'s one-time state when it sent one); the code to paste is always shown too
 * (for `keyward login --no-browser`, or when the listener cannot be reached). Only `/login/cli?org=`
 * starts single sign-on by itself: on `/login` the organization only fills the sign-in form in.
 */
export const CliLogin = () => {
  const { session } = useSession();
  const { pathname, search } = useLocation();
  const port = search.get("callback_port");
  const state = search.get("callback_state") ?? undefined;
  const org = pathname === "/login/cli" && !search.has("sso_error") ? search.get("org") : null;
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<unknown>(null);
  const started = useRef(false);
  const validPort = port !== null && /^\d{1,5}$/.test(port) && Number(port) > 0 && Number(port) < 65536;

  useEffect(() => {
    if (session || !org || started.current) return;
    started.current = true;
    startSingleSignOn(org);
  }, [session, org]);

  useEffect(() => {
    if (session?.kind !== "person" || started.current) return;
    started.current = true;
    void (async () => {
      try {
        const cli = await startCliSession();
        const handoff: Handoff = {
          email: cli.email,
          privateKey: "",
          JTWToken: cli.accessToken,
          RefreshToken: cli.refreshToken,
          ...(state ? { state } : {}),
        };
        const json = JSON.stringify(handoff);
        const code = base64(json);
        if (!validPort) return setOutcome({ code, delivered: "not-asked" });
        setOutcome({ code, delivered: "sending" });
        try {
          const answer = await fetch(`http://127.0.0.1:${port}/`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: json,
          });
          if (!answer.ok) throw new Error(`The command line answered HTTP ${answer.status}`);
          setOutcome({ code, delivered: "yes" });
        } catch (caught) {
          setOutcome({ code, delivered: "no", error: caught });
        }
      } catch (caught) {
        setError(caught);
      }
    })();
  }, [session, state, port, validPort]);

  if (!session) return org ? <Loading what="single sign-on" /> : <SignIn />;
  return (
    <main className="signin" id="main">
      <section className="card signin-card" aria-labelledby="cli-title">
        <h1 id="cli-title">Sign in the command line</h1>
        {session.kind !== "person" ? (
          <ErrorBanner error="The command line signs in as a person: sign out, then sign in with single sign-on." />
        ) : null}
        <ErrorBanner error={error} />
        {session.kind === "person" && !outcome && !error ? <Loading what="a session for the command line" /> : null}
        {outcome?.delivered === "sending" ? <Loading what="the session to your terminal" /> : null}
        {outcome?.delivered === "yes" ? (
          <div className="banner banner-info" role="status">
            You are signed in. You can return to your terminal.
          </div>
        ) : null}
        {outcome?.delivered === "no" ? (
          <div className="banner banner-warning" role="alert">
            The terminal could not be reached ({outcome.error instanceof Error ? outcome.error.message : "no answer"}
            ). Paste the code below into it instead.
          </div>
        ) : null}
        {outcome ? (
          <div className="field">
            <label htmlFor="cli-code">Code to paste into the terminal</label>
            <textarea
              id="cli-code"
              className="code"
              readOnly
              rows={6}
              value={outcome.code}
              onFocus={(e) => e.target.select()}
            />
            <small className="hint">
              For <code>keyward login --no-browser</code>, or when the terminal did not get the session. Keep it secret:
              it signs the command line in as you.
            </small>
          </div>
        ) : null}
      </section>
    </main>
  );
};
