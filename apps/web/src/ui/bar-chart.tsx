export type Series = { key: string; label: string; color: string };
export type Row = { label: string; values: Record<string, number> };

/**
 * A horizontal stacked bar per row, in plain SVG (no chart library for four numbers). Each bar has
 * a text alternative with the figures, and a legend names the colours.
 */
export const StackedBars = ({ title, series, rows }: { title: string; series: Series[]; rows: Row[] }) => {
  const max = Math.max(1, ...rows.map((row) => series.reduce((sum, s) => sum + (row.values[s.key] ?? 0), 0)));
  const rowHeight = 28;
  const labelWidth = 150;
  const width = 600;
  const height = rows.length * rowHeight + 8;
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={title} width="100%">
        {rows.map((row, i) => {
          let x = labelWidth;
          const y = i * rowHeight + 4;
          const summary = series.map((s) => `${s.label} ${row.values[s.key] ?? 0}`).join(", ");
          return (
            <g key={row.label}>
              <title>{`${row.label}: ${summary}`}</title>
              <text x={labelWidth - 8} y={y + 15} textAnchor="end" className="chart-label">
                {row.label.length > 20 ? `${row.label.slice(0, 19)}…` : row.label}
              </text>
              {series.map((s) => {
                const value = row.values[s.key] ?? 0;
                const w = (value / max) * (width - labelWidth - 10);
                const rect = <rect key={s.key} x={x} y={y} width={w} height={rowHeight - 8} fill={s.color} />;
                x += w;
                return rect;
              })}
            </g>
          );
        })}
      </svg>
      <ul className="legend">
        {series.map((s) => (
          <li key={s.key}>
            <span className="swatch" style={{ background: s.color }} aria-hidden="true" /> {s.label}
          </li>
        ))}
      </ul>
    </figure>
  );
};
