import { lazy, Suspense } from "react";
import { useQuery } from "@tanstack/react-query";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Link } from "../router";
import { ErrorBanner, Loading } from "../ui/components";

const Secrets = lazy(() => import("./secrets").then((m) => ({ default: m.Secrets })));
const SecretsOverview = lazy(() => import("./secrets-overview").then((m) => ({ default: m.SecretsOverview })));
const AccessRequests = lazy(() => import("./access-requests").then((m) => ({ default: m.AccessRequests })));
const Access = lazy(() => import("./access").then((m) => ({ default: m.Access })));
const DynamicSecrets = lazy(() => import("./dynamic-secrets").then((m) => ({ default: m.DynamicSecrets })));
const ProjectPeople = lazy(() => import("./project-people").then((m) => ({ default: m.ProjectPeople })));
const ChangeRequests = lazy(() => import("./change-requests").then((m) => ({ default: m.ChangeRequests })));
const SecretSearch = lazy(() => import("./secret-search").then((m) => ({ default: m.SecretSearch })));
const Environments = lazy(() => import("./environments").then((m) => ({ default: m.Environments })));
const SecretSyncs = lazy(() => import("./secret-syncs").then((m) => ({ default: m.SecretSyncs })));
const Rotations = lazy(() => import("./rotations").then((m) => ({ default: m.Rotations })));
const KmsKeys = lazy(() => import("./kms-keys").then((m) => ({ default: m.KmsKeys })));
const History = lazy(() => import("./history").then((m) => ({ default: m.History })));
const Ssh = lazy(() => import("./ssh").then((m) => ({ default: m.Ssh })));

const TABS = [
  { tab: "secrets", label: "Secrets" },
  { tab: "overview", label: "All environments" },
  { tab: "history", label: "History" },
  { tab: "change-requests", label: "Change requests" },
  { tab: "access-requests", label: "Access requests" },
  { tab: "access", label: "Roles & privileges" },
  { tab: "dynamic", label: "Dynamic secrets" },
  { tab: "syncs", label: "Syncs" },
  { tab: "rotations", label: "Rotations" },
  { tab: "environments", label: "Environments" },
  { tab: "people", label: "People" },
];

/** An SSH project holds no secrets: its certificate authority, then its people. */
const SSH_TABS = [
  { tab: "ssh", label: "SSH" },
  { tab: "people", label: "People" },
];

/** A KMS project holds keys. */
const KMS_TABS = [
  { tab: "keys", label: "Keys" },
  { tab: "people", label: "People" },
];

/** Each project type's tabs; the first is where a link to another type's tab lands. */
const TABS_OF: Record<string, typeof TABS> = { ssh: SSH_TABS, kms: KMS_TABS };

export const ProjectPage = ({ projectId, tab }: { projectId: string; tab: string }) => {
  const client = useClient();
  const project = useQuery({
    queryKey: ["project", projectId],
    queryFn: () => ok(client.projects.get({ params: { projectId } })),
  });
  if (project.error) return <ErrorBanner error={project.error} />;
  if (!project.data) return <Loading what="project" />;
  const p = project.data.project;
  const tabs = TABS_OF[p.type] ?? TABS;
  // A link to a tab this type has not (the projects list's secrets tab) opens its first.
  const shown = tabs.some((t) => t.tab === tab) ? tab : tabs[0]!.tab;
  return (
    <section>
      <p className="crumbs">
        <Link href="/">Projects</Link> / <span>{p.name}</span>
      </p>
      <h1>{p.name}</h1>
      <nav className="tabs" aria-label="Project sections">
        {tabs.map((t) => (
          <Link
            key={t.tab}
            href={`/projects/${projectId}/${t.tab}`}
            aria-current={shown === t.tab ? "page" : undefined}
          >
            {t.label}
          </Link>
        ))}
      </nav>
      {/* Searching keys belongs with the secrets: under their tabs, above the folder, results first. */}
      {shown === "secrets" || shown === "overview" ? (
        <Suspense fallback={null}>
          <SecretSearch project={p} />
        </Suspense>
      ) : null}
      <Suspense fallback={<Loading what="section" />}>
        {shown === "ssh" ? <Ssh project={p} /> : null}
        {shown === "keys" ? <KmsKeys project={p} /> : null}
        {shown === "secrets" ? <Secrets project={p} /> : null}
        {shown === "overview" ? <SecretsOverview project={p} /> : null}
        {shown === "history" ? <History project={p} /> : null}
        {shown === "change-requests" ? <ChangeRequests project={p} /> : null}
        {shown === "access-requests" ? <AccessRequests project={p} /> : null}
        {shown === "access" ? <Access project={p} /> : null}
        {shown === "dynamic" ? <DynamicSecrets project={p} /> : null}
        {shown === "syncs" ? <SecretSyncs project={p} /> : null}
        {shown === "rotations" ? <Rotations project={p} /> : null}
        {shown === "environments" ? <Environments project={p} /> : null}
        {shown === "people" ? <ProjectPeople project={p} /> : null}
      </Suspense>
    </section>
  );
};
