import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Badge, Button, Empty, ErrorBanner, Loading, formatDate } from "../ui/components";

const Tokens = ({ identityId }: { identityId: string }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [issued, setIssued] = useState<string | null>(null);
  const key = ["tokens", identityId];
  const tokens = useQuery({
    queryKey: key,
    queryFn: () => ok(client.tokenAuth.listTokens({ params: { identityId }, query: { limit: 100 } })),
  });
  const create = useMutation({
    mutationFn: () => ok(client.tokenAuth.createToken({ params: { identityId }, body: { name: "console" } })),
    onSuccess: async (result) => {
      setIssued(result.accessToken);
      await queryClient.invalidateQueries({ queryKey: key });
    },
  });
  const revoke = useMutation({
    mutationFn: (tokenId: string) => ok(client.tokenAuth.revokeTokenById({ params: { tokenId } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: key }),
  });
  const list = tokens.data?.tokens ?? [];
  return (
    <div>
      <h3>Token Auth tokens</h3>
      <ErrorBanner error={tokens.error ?? create.error ?? revoke.error} />
      {issued ? (
        <div className="banner banner-info" role="status">
          New token (shown once): <code className="wrap">{issued}</code>
        </div>
      ) : null}
      {tokens.isPending ? <Loading what="tokens" /> : null}
      {tokens.data && list.length === 0 ? <Empty>No tokens.</Empty> : null}
      <ul className="rows">
        {list.map((t) => (
          <li key={t.id}>
            <strong>{t.name ?? "unnamed"}</strong> <span className="muted small">{formatDate(t.createdAt)}</span>{" "}
            {t.isAccessTokenRevoked ? <Badge tone="bad">revoked</Badge> : <Badge tone="ok">active</Badge>}{" "}
            <span className="small">
              uses {t.accessTokenNumUses}
              {t.accessTokenNumUsesLimit ? ` / ${t.accessTokenNumUsesLimit}` : ""}, TTL {t.accessTokenTTL}s
            </span>{" "}
            {t.isAccessTokenRevoked ? null : (
              <Button variant="danger" onClick={() => revoke.mutate(t.id)} disabled={revoke.isPending}>
                Revoke
              </Button>
            )}
          </li>
        ))}
      </ul>
      <Button variant="secondary" onClick={() => create.mutate()} disabled={create.isPending}>
        Create token
      </Button>
    </div>
  );
};

const ClientSecrets = ({ identityId }: { identityId: string }) => {
  const client = useClient();
  const secrets = useQuery({
    queryKey: ["client-secrets", identityId],
    queryFn: () => ok(client.universalAuth.listClientSecrets({ params: { identityId } })),
  });
  const list = secrets.data?.clientSecretData ?? [];
  return (
    <div>
      <h3>Universal Auth client secrets</h3>
      <ErrorBanner error={secrets.error} />
      {secrets.data && list.length === 0 ? <Empty>No client secrets.</Empty> : null}
      <ul className="rows">
        {list.map((s) => (
          <li key={s.id}>
            <code>{s.clientSecretPrefix}…</code> {s.description}{" "}
            {s.isClientSecretRevoked ? <Badge tone="bad">revoked</Badge> : <Badge tone="ok">active</Badge>}{" "}
            <span className="small">uses {s.clientSecretNumUses}</span>
          </li>
        ))}
      </ul>
    </div>
  );
};

/** One identity: its auth methods, and the credentials of the two that issue them here. */
export const IdentityDetail = ({ identityId }: { identityId: string }) => {
  const client = useClient();
  const identity = useQuery({
    queryKey: ["identity", identityId],
    queryFn: () => ok(client.identities.get({ params: { identityId } })),
  });
  if (identity.error) return <ErrorBanner error={identity.error} />;
  if (!identity.data) return <Loading what="identity" />;
  const { identity: id } = identity.data;
  return (
    <section className="card stack" aria-labelledby="identity-title">
      <h2 id="identity-title">{id.name}</h2>
      <p className="small">
        Auth methods: {id.authMethods.length === 0 ? "none" : id.authMethods.map((m) => <Badge key={m}>{m}</Badge>)}
      </p>
      {id.authMethods.includes("token-auth") ? <Tokens identityId={identityId} /> : null}
      {id.authMethods.includes("universal-auth") ? <ClientSecrets identityId={identityId} /> : null}
    </section>
  );
};
