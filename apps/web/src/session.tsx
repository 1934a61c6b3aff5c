import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import type { KeywardClient } from "@keyward/client";
import { apiClient } from "./api";

/** Kept in sessionStorage only: it dies with the tab, and no cookie ever carries it. */
const STORAGE_KEY = "keyward.session";

export type Session = { token: string; expiresAt: number | null };

type SessionState = {
  session: Session | null;
  client: KeywardClient | null;
  notice: string | null;
  signIn: (session: Session) => void;
  signOut: (notice?: string) => void;
};

const SessionContext = createContext<SessionState | null>(null);

const readStored = (): Session | null => {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    if (!raw) return null;
    const parsed = JSON.parse(raw) as Session;
    if (parsed.expiresAt !== null && parsed.expiresAt <= Date.now()) return null;
    return parsed;
  } catch {
    return null;
  }
};

const MAX_TIMER_MS = 2_147_483_647;

export const EXPIRED_NOTICE = "Your session has expired. Sign in again.";

export const SessionProvider = ({ children }: { children: ReactNode }) => {
  const [session, setSession] = useState<Session | null>(readStored);
  const [notice, setNotice] = useState<string | null>(null);

  const signIn = useCallback((next: Session) => {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify(next));
    setNotice(null);
    setSession(next);
  }, []);
  const signOut = useCallback((message?: string) => {
    sessionStorage.removeItem(STORAGE_KEY);
    setNotice(message ?? null);
    setSession(null);
  }, []);

  // A token with a known lifetime ends the session when it runs out, not at the next failed call.
  useEffect(() => {
    if (!session?.expiresAt) return;
    const left = Math.max(0, session.expiresAt - Date.now());
    // setTimeout fires at once past 2^31-1 ms (~24.8 days); a token living longer is left to the 401.
    if (left > MAX_TIMER_MS) return;
    const timer = setTimeout(() => signOut(EXPIRED_NOTICE), left);
    return () => clearTimeout(timer);
  }, [session, signOut]);

  const client = useMemo(() => (session ? apiClient(session.token) : null), [session]);
  const value = useMemo(
    () => ({ session, client, notice, signIn, signOut }),
    [session, client, notice, signIn, signOut],
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
