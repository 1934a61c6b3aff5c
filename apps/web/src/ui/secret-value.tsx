import { useState } from "react";
import { Button } from "./components";
import { copyText } from "./copy";

/**
 * A secret's value as every table and dialog shows it: masked until revealed, with a Copy button that
 * copies without revealing. A value the caller may not read says so and offers neither.
 * `name` labels the buttons for screen readers ("Reveal STRIPE_KEY in dev").
 */
export const SecretValue = ({ value, hidden, name }: { value: string; hidden: boolean; name: string }) => {
  const [shown, setShown] = useState(false);
  const [copied, setCopied] = useState<boolean | null>(null);
  if (hidden) return <span className="muted">hidden by policy</span>;
  return (
    <span className="secret-value">
      {shown ? (
        <code data-testid="secret-value">{value}</code>
      ) : (
        <>
          <span aria-hidden="true">••••••••</span>
          <span className="sr-only">masked</span>
        </>
      )}{" "}
      <Button variant="ghost" onClick={() => setShown(!shown)}>
        {shown ? "Hide" : "Reveal"}
        <span className="sr-only"> {name}</span>
      </Button>
      <Button variant="ghost" onClick={() => void copyText(value).then(setCopied)}>
        {copied ? "Copied" : "Copy"}
        <span className="sr-only"> {name}</span>
      </Button>
      <span className="sr-only" role="status">
        {copied === null ? "" : copied ? `${name} copied.` : "Could not copy here."}
      </span>
    </span>
  );
};
