// A case's latest outcomes, newest first, as a strip of marks (CaseHealth.outcomes: `p` passed,
// `r` passed on retry, `f` failed), with a text alternative counting them.
const outcomeName: Record<string, string> = { p: "passed", r: "passed on retry", f: "failed" };

export function OutcomeStrip({ outcomes }: { outcomes: string }) {
  if (!outcomes) return <span className="muted">—</span>;
  const marks = [...outcomes];
  const failed = marks.filter((m) => m === "f").length;
  const retried = marks.filter((m) => m === "r").length;
  const label = `Latest ${marks.length} results, newest first: ${failed} failed, ${retried} passed on retry`;
  return (
    <span className="outcome-strip" role="img" aria-label={label} title={label}>
      {marks.map((m, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the marks are positions in a fixed string
        <span key={i} className={`outcome outcome-${m}`} title={outcomeName[m]} />
      ))}
    </span>
  );
}
