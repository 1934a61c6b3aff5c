import { useQuery } from "@tanstack/react-query";
import type { z } from "zod";
import type { SecretImportResultSchema } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Badge, ErrorBanner } from "../ui/components";
import type { Scope } from "./types";

type Imported = z.infer<typeof SecretImportResultSchema>;

/**
 * The folder's imports in order, each with the keys it brings and whether they take effect: the
 * folder's own secrets win, then the last import before earlier ones (the server's precedence).
 */
export const SecretImports = ({
  scope,
  ownKeys,
  imported,
}: {
  scope: Scope;
  ownKeys: string[];
  imported: Imported[];
}) => {
  const client = useClient();
  const imports = useQuery({
    queryKey: ["secret-imports", scope],
    queryFn: () =>
      ok(
        client.secretImports.list({
          query: { workspaceId: scope.projectId, environment: scope.environment, path: scope.path },
        }),
      ),
  });
  const list = [...(imports.data?.secretImports ?? [])].sort((a, b) => a.position - b.position);
  if (imports.error) return <ErrorBanner error={imports.error} />;
  if (list.length === 0) return null;
  const own = new Set(ownKeys);
  const keysOf = (env: string, path: string) =>
    imported.find((i) => i.environment === env && i.secretPath === path)?.secrets.map((s) => s.secretKey) ?? [];
  return (
    <section className="card" aria-labelledby="imports-title">
      <h2 id="imports-title">Imports, in order</h2>
      <ol className="imports">
        {list.map((item, index) => {
          const later = new Set(list.slice(index + 1).flatMap((next) => keysOf(next.importEnv.slug, next.importPath)));
          const keys = keysOf(item.importEnv.slug, item.importPath);
          return (
            <li key={item.id}>
              <strong>
                {item.importEnv.name} {item.importPath}
              </strong>
              {item.isReplication ? <Badge>replication</Badge> : null}
              <ul className="chips">
                {keys.length === 0 ? <li className="muted small">no secrets visible</li> : null}
                {keys.map((key) => {
                  const status = own.has(key)
                    ? "overridden here"
                    : later.has(key)
                      ? "shadowed by a later import"
                      : null;
                  return (
                    <li key={key}>
                      <code className={status ? "struck" : undefined}>{key}</code>
                      {status ? <span className="muted small"> ({status})</span> : null}
                    </li>
                  );
                })}
              </ul>
            </li>
          );
        })}
      </ol>
    </section>
  );
};
