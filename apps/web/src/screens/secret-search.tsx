import { useState, type FormEvent } from "react";
import { useQuery } from "@tanstack/react-query";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Link } from "../router";
import { Button, Empty, ErrorBanner, Loading, TableHead, formatDate } from "../ui/components";
import type { Project } from "./types";

/**
 * A search box over the whole project: keys by substring or glob (`DB_*`), across every environment
 * and folder the signed-in caller may see; each result links to its folder in the secrets screen.
 * Values are never asked for here.
 */
export const SecretSearch = ({ project }: { project: Project }) => {
  const client = useClient();
  const [text, setText] = useState("");
  const [query, setQuery] = useState<string | undefined>();
  const results = useQuery({
    queryKey: ["secret-search", project.id, query],
    enabled: query !== undefined,
    queryFn: () =>
      ok(client.secretSearch.search({ params: { projectId: project.id }, query: { key: query!, limit: 50 } })),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = text.trim();
    setQuery(trimmed.length > 0 ? trimmed : undefined);
  };
  const hits = results.data?.secrets ?? [];
  return (
    <div className="stack">
      <form className="inline-form" role="search" onSubmit={submit}>
        <label htmlFor="secret-search-input" className="sr-only">
          Search secrets
        </label>
        <input
          id="secret-search-input"
          type="search"
          placeholder="Search keys in every environment (DB_*, token…)"
          value={text}
          maxLength={256}
          onChange={(event) => setText(event.target.value)}
        />
        <Button type="submit">Search</Button>
      </form>
      <ErrorBanner error={results.error} />
      {query !== undefined && results.isPending ? <Loading what="results" /> : null}
      {results.data && hits.length === 0 ? <Empty>No secret matches “{query}”.</Empty> : null}
      {hits.length > 0 ? (
        <table className="table">
          <caption className="sr-only">Search results</caption>
          <TableHead columns={["Key", "Environment", "Folder", "Tags", "Updated"]} />
          <tbody>
            {hits.map((hit) => (
              <tr key={hit.id}>
                <td>{hit.secretKey}</td>
                <td>{hit.environment}</td>
                <td>
                  <Link
                    href={`/projects/${project.id}/secrets?env=${encodeURIComponent(hit.environment)}&path=${encodeURIComponent(hit.secretPath)}`}
                  >
                    {hit.secretPath}
                  </Link>
                </td>
                <td>{hit.tags.map((t) => t.slug).join(", ")}</td>
                <td>{formatDate(hit.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {results.data?.nextCursor ? <p className="hint">More results: narrow the search.</p> : null}
    </div>
  );
};
