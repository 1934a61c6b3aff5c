import { KeywardError } from "@keyward/client";
import { useEffect, useId, useRef, type ButtonHTMLAttributes, type InputHTMLAttributes, type ReactNode } from "react";

export const Button = ({
  variant = "primary",
  className,
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: "primary" | "secondary" | "danger" | "ghost" }) => (
  <button type="button" className={`btn btn-${variant}${className ? ` ${className}` : ""}`} {...rest} />
);

export const Field = ({
  label,
  error,
  hint,
  ...input
}: InputHTMLAttributes<HTMLInputElement> & { label: string; error?: string; hint?: string }) => {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        {...input}
      />
      {hint && !error ? <small className="hint">{hint}</small> : null}
      {error ? (
        <small className="field-error" id={`${id}-error`}>
          {error}
        </small>
      ) : null}
    </div>
  );
};

export const SelectField = ({
  label,
  value,
  onChange,
  options,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  options: { value: string; label: string }[];
}) => {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.target.value)}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
};

/** True for a 403: the caller may not see or do this. */
export const isForbidden = (error: unknown) => error instanceof KeywardError && error.status === 403;

/** A server or validation error in plain words, announced to screen readers; a 403 says "not allowed". */
export const ErrorBanner = ({ error }: { error: unknown }) =>
  error ? (
    <div className={`banner ${isForbidden(error) ? "banner-warning" : "banner-error"}`} role="alert">
      {isForbidden(error) ? "Not allowed: " : null}
      {error instanceof Error ? error.message : typeof error === "string" ? error : "Something went wrong"}
    </div>
  ) : null;

export const Loading = ({ what }: { what: string }) => (
  <p className="muted" role="status" aria-live="polite">
    Loading {what}…
  </p>
);

export const Empty = ({ children }: { children: ReactNode }) => <p className="empty">{children}</p>;

export const Badge = ({
  tone = "neutral",
  children,
}: {
  tone?: "ok" | "warn" | "bad" | "neutral";
  children: ReactNode;
}) => <span className={`badge badge-${tone}`}>{children}</span>;

/** A modal on the native <dialog>: focus is trapped and Escape closes it. */
export const Dialog = ({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode }) => {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    // No close() on cleanup: its close event would call onClose, and the element goes with the component anyway.
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onClose}>
      <header className="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <Button variant="ghost" aria-label="Close" onClick={onClose}>
          ×
        </Button>
      </header>
      {children}
    </dialog>
  );
};

export const PageHeader = ({ title, children }: { title: string; children?: ReactNode }) => (
  <div className="page-head">
    <h1>{title}</h1>
    <div className="page-actions">{children}</div>
  </div>
);

export const formatDate = (value: string | Date | null | undefined) =>
  value ? new Date(value).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "—";

/** A date with the time to the second, for events a few seconds apart (a sync's runs). */
export const formatDateTime = (value: string | Date | null | undefined) =>
  value ? new Date(value).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" }) : "—";

/** "2h 5m", "45s": a duration for humans. */
export const formatDuration = (ms: number) => {
  const s = Math.max(0, Math.round(ms / 1000));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
};

/** A table's column headings; `actions` adds the unlabelled (screen-reader-named) column of row buttons. */
export const TableHead = ({ columns, actions = false }: { columns: readonly string[]; actions?: boolean }) => (
  <thead>
    <tr>
      {columns.map((column) => (
        <th key={column} scope="col">
          {column}
        </th>
      ))}
      {actions ? (
        <th scope="col">
          <span className="sr-only">Actions</span>
        </th>
      ) : null}
    </tr>
  </thead>
);
