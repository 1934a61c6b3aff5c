import { useId, useState, type FormEvent } from "react";
import { contract } from "@keyward/contract";
import { ok } from "@keyward/client";
import { apiClient } from "../api";
import { useSession } from "../session";
import { Button, ErrorBanner, Field } from "../ui/components";
import { copyText } from "../ui/copy";
import { validate, type FieldErrors } from "../ui/form";

type Issued = { token: string; warning: string; organization: string; slug: string; email: string };

/** Copies `text`; where the page may not, the field's text is selected for the keyboard. */
const copyOrSelect = async (text: string, input: HTMLInputElement | null) => {
  const copied = await copyText(text);
  if (!copied) input?.select();
  return copied;
};

/** A read-only value with a Copy button that says, for screen readers too, whether it copied. */
const CopyValue = ({ label, value, name }: { label: string; value: string; name: string }) => {
  const id = useId();
  const [copied, setCopied] = useState<boolean | null>(null);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div style={{ display: "flex", gap: "0.5rem" }}>
        <input
          id={id}
          name={name}
          readOnly
          value={value}
          style={{ flex: 1, fontFamily: "monospace" }}
          onFocus={(e) => e.target.select()}
        />
        <Button
          variant="secondary"
          aria-label={`Copy ${label.toLowerCase()}`}
          onClick={() =>
            void copyOrSelect(value, document.getElementById(id) as HTMLInputElement | null).then(setCopied)
          }
        >
          {copied ? "Copied" : "Copy"}
        </Button>
      </div>
      <small className="hint" role="status">
        {copied === null
          ? ""
          : copied
            ? `${label} copied.`
            : "Could not copy here: the text is selected, press Ctrl+C (⌘C)."}
      </small>
    </div>
  );
};

/**
 * The first page of an instance nobody has set up yet: the bootstrap call as a form. Its answer,
 * the instance admin's token, is shown once, with what it may do and how to replace it, beside the
 * organization's slug (people's single sign-on names it) and the admin's e-mail, each with a Copy button.
 */
export const SetUp = () => {
  const { signIn } = useSession();
  const [email, setEmail] = useState("");
  const [organization, setOrganization] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [issued, setIssued] = useState<Issued | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    const checked = validate(contract.system.bootstrap.body, { email, organization });
    if (checked.errors) return setErrors(checked.errors);
    setErrors({});
    setBusy(true);
    try {
      const answer = await ok(apiClient().system.bootstrap({ body: checked.data }));
      setIssued({
        token: answer.identity.credentials.token,
        warning: answer.warning,
        organization: answer.organization.name,
        slug: answer.organization.slug,
        email: answer.user.email,
      });
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  if (issued)
    return (
      <main className="signin" id="main">
        <section className="card signin-card" aria-labelledby="issued-title">
          <h1 id="issued-title">Keyward is set up</h1>
          <p>
            Organization <strong>{issued.organization}</strong> is ready. This is its instance admin token; it is shown
            only now.
          </p>
          <CopyValue label="Instance admin token" name="token" value={issued.token} />
          <CopyValue label="Organization slug" name="slug" value={issued.slug} />
          <CopyValue label="Admin e-mail" name="email" value={issued.email} />
          <p className="muted">
            People sign in with the organization&apos;s single sign-on once it is configured: they give the slug{" "}
            <code>{issued.slug}</code> on the sign-in page, or run <code>keyward login --org {issued.slug}</code>. The
            admin e-mail is the person their provider must vouch for first.
          </p>
          <div className="banner banner-warning" role="alert">
            {issued.warning}
          </div>
          <Button type="button" onClick={() => signIn({ token: issued.token, expiresAt: null, kind: "machine" })}>
            Continue with this token
          </Button>
        </section>
      </main>
    );

  return (
    <main className="signin" id="main">
      <form className="card signin-card" onSubmit={(event) => void submit(event)} noValidate>
        <h1>Set up Keyward</h1>
        <p className="muted">
          Nobody has set up this instance yet. Name its first organization; you get the instance admin token, once.
        </p>
        <Field
          label="Organization"
          name="organization"
          value={organization}
          onChange={(e) => setOrganization(e.target.value)}
          error={errors.organization}
        />
        <Field
          label="Admin e-mail"
          name="email"
          type="email"
          autoComplete="email"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={errors.email}
        />
        <ErrorBanner error={error} />
        <Button type="submit" disabled={busy}>
          {busy ? "Setting up…" : "Set up"}
        </Button>
      </form>
    </main>
  );
};
