import { Badge, formatDate } from "../ui/components";
import { useNow } from "../ui/now";

export type Grant = { id: string; who: string; what: string; start: string; end: string };

const DAY = 86_400_000;

/**
 * Temporary grants on one time axis: a bar from start to end for each, with "now" marked. Expired
 * grants are greyed and labelled, as are those not started yet.
 */
export const GrantTimeline = ({ grants }: { grants: Grant[] }) => {
  // The clock ticks every 5 s; a grant that arrives between ticks is judged against the time of this render.
  const now = Math.max(useNow(5_000), Date.now());
  if (grants.length === 0) return <p className="empty">No temporary grants.</p>;
  const times = grants.flatMap((g) => [Date.parse(g.start), Date.parse(g.end)]);
  const from = Math.min(now - DAY / 24, ...times);
  const to = Math.max(now + DAY / 24, ...times);
  const x = (t: number) => 2 + ((t - from) / (to - from)) * 96;
  const statusOf = (g: Grant) =>
    Date.parse(g.end) <= now ? "expired" : Date.parse(g.start) > now ? "scheduled" : "active";
  return (
    <div className="timeline">
      <ol aria-label="Temporary grants">
        {[...grants]
          .sort((a, b) => Date.parse(a.start) - Date.parse(b.start))
          .map((g) => {
            const status = statusOf(g);
            const left = x(Date.parse(g.start));
            const width = Math.max(0.8, x(Date.parse(g.end)) - left);
            return (
              <li key={g.id} className={`grant grant-${status}`} data-status={status}>
                <div className="grant-label">
                  <strong>{g.who}</strong> · {g.what}{" "}
                  <Badge tone={status === "active" ? "ok" : status === "expired" ? "bad" : "warn"}>{status}</Badge>
                  <span className="muted small">
                    {" "}
                    {formatDate(g.start)} → {formatDate(g.end)}
                  </span>
                </div>
                <svg className="grant-bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
                  <rect x="0" y="4" width="100" height="2" className="track" />
                  <rect x={left} y="1" width={width} height="8" rx="1" className="bar" />
                  <line x1={x(now)} x2={x(now)} y1="0" y2="10" className="now" />
                </svg>
              </li>
            );
          })}
      </ol>
      <p className="muted small">The vertical line is now. Bars run from each grant&apos;s start to its end.</p>
    </div>
  );
};
