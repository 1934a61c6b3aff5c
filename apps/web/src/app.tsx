import { lazy, Suspense, useEffect, useState, type ReactNode } from "react";
import { MutationCache, QueryCache, QueryClient, QueryClientProvider, useQuery } from "@tanstack/react-query";
import { KeywardError, ok } from "@keyward/client";
import { SessionProvider, useClient, useSession } from "./session";
import { Link, navigate, useLocation } from "./router";
import { Button, Loading } from "./ui/components";
import { SignIn } from "./screens/sign-in";
import { isCliHandoff } from "./cli-handoff";

// One chunk per screen: the sign-in page loads none of them.
const Projects = lazy(() => import("./screens/projects").then((m) => ({ default: m.Projects })));
const ProjectPage = lazy(() => import("./screens/project").then((m) => ({ default: m.ProjectPage })));
const Identities = lazy(() => import("./screens/identities").then((m) => ({ default: m.Identities })));
const AuditLog = lazy(() => import("./screens/audit-log").then((m) => ({ default: m.AuditLog })));
const Certificates = lazy(() => import("./screens/certificates").then((m) => ({ default: m.Certificates })));
const Groups = lazy(() => import("./screens/groups").then((m) => ({ default: m.Groups })));
const Organization = lazy(() => import("./screens/organization").then((m) => ({ default: m.Organization })));
const AppConnections = lazy(() => import("./screens/app-connections").then((m) => ({ default: m.AppConnections })));
const AuditStreams = lazy(() => import("./screens/audit-streams").then((m) => ({ default: m.AuditStreams })));
const ApprovalsInbox = lazy(() => import("./screens/approvals-inbox").then((m) => ({ default: m.ApprovalsInbox })));
const CliLogin = lazy(() => import("./screens/cli-login").then((m) => ({ default: m.CliLogin })));

const NAV = [
  { href: "/", label: "Projects" },
  { href: "/approvals", label: "Approvals" },
  { href: "/identities", label: "Identities" },
  { href: "/certificates", label: "Certificates" },
  { href: "/groups", label: "Groups" },
  { href: "/app-connections", label: "App connections" },
  { href: "/audit-log", label: "Audit log" },
  { href: "/organization", label: "Organization" },
];

const route = (pathname: string): ReactNode => {
  const project = /^\/projects\/([^/]+)(?:\/([a-z-]+))?\/?$/.exec(pathname);
  if (project) return <ProjectPage projectId={decodeURIComponent(project[1] ?? "")} tab={project[2] ?? "secrets"} />;
  if (pathname === "/" || pathname === "/projects" || pathname === "/login") return <Projects />;
  const organization = /^\/organization(?:\/([a-z-]+))?\/?$/.exec(pathname);
  if (organization) return <Organization tab={organization[1] ?? "people"} />;
  if (pathname === "/approvals") return <ApprovalsInbox />;
  if (pathname === "/identities") return <Identities />;
  if (pathname === "/audit-log") return <AuditLog />;
  if (pathname === "/app-connections") return <AppConnections />;
  if (pathname === "/audit-log/streams") return <AuditStreams />;
  if (pathname === "/certificates") return <Certificates />;
  if (pathname === "/groups") return <Groups />;
  return (
    <div>
      <h1>Page not found</h1>
      <p>
        <Link href="/">Back to projects</Link>
      </p>
    </div>
  );
};

/**
 * Who is signed in: a person's e-mail, or the machine identity behind the token and its organization.
 * The token's own description is read once per session (a token with a use limit spends one use on it).
 */
const Who = () => {
  const { session } = useSession();
  const client = useClient();
  const person = session?.kind === "person";
  const me = useQuery({ queryKey: ["me"], queryFn: () => ok(client.users.me()), enabled: person });
  const self = useQuery({
    queryKey: ["token-self"],
    queryFn: () => ok(client.accessTokens.self()),
    enabled: session !== undefined && !person,
    staleTime: Infinity,
    retry: false,
  });
  if (!person) {
    const identity = self.data?.identity;
    return (
      <span className="small who" title={self.data ? `organization ${self.data.organization.name}` : undefined}>
        {identity ? `${identity.name} (identity)` : "Machine identity"}
      </span>
    );
  }
  return <span className="small who">{me.data?.user.email ?? ""}</span>;
};

const Shell = () => {
  const { signOut } = useSession();
  const { pathname } = useLocation();
  const active = (href: string) =>
    href === "/" ? pathname === "/" || pathname.startsWith("/projects") : pathname.startsWith(href);
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link href="/" className="brand">
          Keyward
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <Link href={item.href} aria-current={active(item.href) ? "page" : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <Who />
        <Button variant="secondary" onClick={() => signOut("You are signed out.")}>
          Sign out
        </Button>
      </header>
      <main id="main" tabIndex={-1}>
        <Suspense fallback={<Loading what="screen" />}>{route(pathname)}</Suspense>
      </main>
    </div>
  );
};

const Gate = () => {
  const { session, checking, unauthorized } = useSession();
  const { pathname, search } = useLocation();
  const cliHandoff = isCliHandoff(pathname, search);
  // A 401 on any call means the token ended (expired, revoked, out of uses): a person's is renewed once, else back to sign-in.
  const [queryClient] = useState(() => {
    const onError = (error: unknown) => {
      if (error instanceof KeywardError && error.isUnauthorized) unauthorized();
    };
    return new QueryClient({
      queryCache: new QueryCache({ onError }),
      mutationCache: new MutationCache({ onError }),
      defaultOptions: {
        queries: {
          retry: (count, error) =>
            !(error instanceof KeywardError && error.status > 0 && error.status < 500) && count < 2,
          refetchOnWindowFocus: false,
          staleTime: 5_000,
        },
      },
    });
  });
  // Nothing read with one token is shown to the next one.
  useEffect(() => {
    if (!session) queryClient.clear();
  }, [session, queryClient]);
  // A renewed token retries what the old one was refused.
  const token = session?.token;
  useEffect(() => {
    if (token) void queryClient.refetchQueries({ predicate: (query) => query.state.status === "error" });
  }, [token, queryClient]);
  // Signed in, the sign-in address (an invitation link) opens the console's start page; one that
  // names a command line's listener hands that listener a session instead.
  const signedIn = session !== null;
  useEffect(() => {
    if (signedIn && pathname === "/login" && !cliHandoff) navigate("/", true);
  }, [signedIn, pathname, cliHandoff]);
  if (checking) return <Loading what="session" />;
  if (cliHandoff)
    return (
      <Suspense fallback={<Loading what="page" />}>
        <CliLogin />
      </Suspense>
    );
  if (!session) return <SignIn />;
  return (
    <QueryClientProvider client={queryClient}>
      <Shell />
    </QueryClientProvider>
  );
};

export const App = () => (
  <SessionProvider>
    <Gate />
  </SessionProvider>
);
