import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type { KeywardClient } from "@keyward/client";
import { apiClient } from "./api";
import { navigate } from "./router";

/** A machine credential's token is kept in sessionStorage only: it dies with the tab, and no cookie ever carries it. */
const STORAGE_KEY = "keyward.session";
/** Where to come back to after single sign-on (the provider always returns the browser to `/`). */
const AFTER_SIGN_IN_KEY = "keyward.after-sign-in";

/**
 * `machine`: an identity's token typed in (or from Universal Auth). `person`: single sign-on; the
 * access token lives in memory only and is renewed with the HttpOnly refresh cookie.
 */
export type Session = { token: string; expiresAt: number | null; kind: "machine" | "person" };

type SessionState = {
  session: Session | null;
  /** True while the console asks whether the refresh cookie holds a session (on load). */
  checking: boolean;
  client: KeywardClient | null;
  notice: string | null;
  signIn: (session: Session) => void;
  signOut: (notice?: string) => void;
  /** What a 401 means: a person's access token is renewed once; otherwise (or if that fails) back to sign-in. */
  unauthorized: () => void;
  /** A person's session, renewed now; false when the session ended. */
  renew: () => Promise<boolean>;
};

const SessionContext = createContext<SessionState | null>(null);

const readStored = (): Session | null => {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    if (!raw) return null;
    const parsed = JSON.parse(raw) as Session;
    if (parsed.expiresAt !== null && parsed.expiresAt <= Date.now()) return null;
    return { ...parsed, kind: "machine" };
  } catch {
    return null;
  }
};

const MAX_TIMER_MS = 2_147_483_647;

export const EXPIRED_NOTICE = "Your session has expired. Sign in again.";

type Refreshed = { ok: true; session: Session } | { ok: false; ended: boolean };

/** POST /api/v1/auth/token with the refresh cookie (same origin): a fresh access token, and a rotated cookie. */
const refreshPersonSession = async (): Promise<Refreshed> => {
  try {
    const response = await fetch("/api/v1/auth/token", { method: "POST", credentials: "same-origin" });
    if (!response.ok) return { ok: false, ended: response.status === 401 };
    const body = (await response.json()) as { token: string; expiresIn: number };
    return {
      ok: true,
      session: { token: body.token, expiresAt: Date.now() + body.expiresIn * 1000, kind: "person" },
    };
  } catch {
    return { ok: false, ended: false };
  }
};

/** Remember a console page to open once single sign-on brings the browser back. */
export const returnAfterSignIn = (path: string) => sessionStorage.setItem(AFTER_SIGN_IN_KEY, path);

export const SessionProvider = ({ children }: { children: ReactNode }) => {
  const [session, setSession] = useState<Session | null>(readStored);
  const [checking, setChecking] = useState(() => session === null);
  const [notice, setNotice] = useState<string | null>(null);
  const current = useRef(session);
  current.current = session;
  const renewing = useRef<Promise<boolean> | null>(null);
  const renewals = useRef<number[]>([]);

  const signIn = useCallback((next: Session) => {
    if (next.kind === "machine") sessionStorage.setItem(STORAGE_KEY, JSON.stringify(next));
    setNotice(null);
    setSession(next);
  }, []);
  const signOut = useCallback((message?: string) => {
    sessionStorage.removeItem(STORAGE_KEY);
    const done = () => {
      setNotice(message ?? null);
      setSession(null);
    };
    // A person's session is ended server-side (and its cookie cleared) before the page says so.
    if (current.current?.kind === "person" && message !== EXPIRED_NOTICE) {
      current.current = null;
      void fetch("/api/v1/auth/logout", { method: "POST", credentials: "same-origin" })
        .catch(() => undefined)
        .finally(done);
      return;
    }
    done();
  }, []);

  const renew = useCallback(() => {
    renewing.current ??= refreshPersonSession()
      .then((answer) => {
        if (answer.ok) {
          setSession(answer.session);
          return true;
        }
        if (answer.ended) signOut(EXPIRED_NOTICE);
        return false;
      })
      .finally(() => {
        renewing.current = null;
      });
    return renewing.current;
  }, [signOut]);

  const unauthorized = useCallback(() => {
    if (current.current?.kind !== "person") return signOut(EXPIRED_NOTICE);
    // Renewed once per 401; a token that keeps being refused right after renewal ends the session.
    const now = Date.now();
    renewals.current = [...renewals.current.filter((at) => now - at < 30_000), now];
    if (renewals.current.length > 3) return signOut(EXPIRED_NOTICE);
    void renew();
  }, [renew, signOut]);

  // On load, with no token in hand: the refresh cookie may hold a person's session.
  useEffect(() => {
    if (!checking) return;
    let live = true;
    void refreshPersonSession().then((answer) => {
      if (!live) return;
      if (answer.ok) {
        setSession(answer.session);
        const back = sessionStorage.getItem(AFTER_SIGN_IN_KEY);
        sessionStorage.removeItem(AFTER_SIGN_IN_KEY);
        if (back?.startsWith("/") && !back.startsWith("//")) navigate(back, true);
      }
      setChecking(false);
    });
    return () => {
      live = false;
    };
  }, [checking]);

  // A person's token is renewed before it runs out; a machine token with a known lifetime ends the session then.
  useEffect(() => {
    if (!session?.expiresAt) return;
    const left = Math.max(0, session.expiresAt - Date.now());
    // setTimeout fires at once past 2^31-1 ms (~24.8 days); a token living longer is left to the 401.
    if (left > MAX_TIMER_MS) return;
    if (session.kind === "person") {
      const early = Math.min(60_000, left / 5);
      const timer = setTimeout(() => void renew(), Math.max(0, left - early));
      return () => clearTimeout(timer);
    }
    const timer = setTimeout(() => signOut(EXPIRED_NOTICE), left);
    return () => clearTimeout(timer);
  }, [session, signOut, renew]);

  const client = useMemo(() => (session ? apiClient(session.token) : null), [session]);
  const value = useMemo(
    () => ({ session, checking, client, notice, signIn, signOut, unauthorized, renew }),
    [session, checking, client, notice, signIn, signOut, unauthorized, renew],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
};

export const useSession = () => {
  const value = useContext(SessionContext);
  if (!value) throw new Error("useSession outside SessionProvider");
  return value;
};

/** The signed-in client; screens render only inside the signed-in shell. */
export const useClient = (): KeywardClient => {
  const { client } = useSession();
  if (!client) throw new Error("not signed in");
  return client;
};
