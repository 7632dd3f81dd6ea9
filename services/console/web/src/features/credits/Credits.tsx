// A project's credits: the balance and the ledger (grants, charges, refunds), newest first, paged.
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { LedgerEntryKind } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Link } from "react-router";
import { isNotFound } from "../../api";
import { DataTable } from "../../components/DataTable";
import { Pager, usePageToken } from "../../components/Pager";
import { Empty, NotFound, QueryView } from "../../components/States";
import { Badge } from "../../components/Status";
import { Time } from "../../components/Time";
import { count, ledgerKindName, signed } from "../../format";
import { useProject } from "../../project";
import { NoCredits } from "./CreditsHelp";

const kindTone = {
  [LedgerEntryKind.UNSPECIFIED]: "neutral",
  [LedgerEntryKind.GRANT]: "good",
  [LedgerEntryKind.CHARGE]: "neutral",
  [LedgerEntryKind.REFUND]: "active",
} as const;

export function Credits() {
  const { projectId, project, name, path } = useProject();
  const pages = usePageToken();
  const credits = useQuery(
    ConsoleService.method.getCredits,
    { projectId, pageToken: pages.token, pageSize: 50 },
    { placeholderData: keepPreviousData },
  );
  if (isNotFound(project.error) || isNotFound(credits.error)) return <NotFound what="Project" />;
  return (
    <>
      <p className="eyebrow">{name}</p>
      <h1>Credits</h1>
      <p className="lead">
        A run costs one credit per test, charged when it starts. Tests that never ran (cancelled before an
        executor took them, environment unreachable, no executor) are refunded.
      </p>
      <QueryView query={credits} what="credits">
        {(data) => (
          <>
            <section className="panel balance" aria-label="Balance">
              <p className="balance-label">Balance</p>
              <p className="balance-value">{count(data.balance)}</p>
              <p className="muted small">credits available now</p>
            </section>
            {data.balance === 0n && <NoCredits projectId={projectId} />}
            <section aria-labelledby="ledger-heading" className="section">
              <h2 id="ledger-heading">Ledger</h2>
              {data.entries.length === 0 ? (
                <Empty title="No credits were granted or spent yet." />
              ) : (
                <DataTable
                  rows={data.entries}
                  columns={[
                    { label: "When", cell: (entry) => <Time at={entry.createdAt} /> },
                    {
                      label: "Kind",
                      cell: (entry) => (
                        <Badge tone={kindTone[entry.kind]}>{ledgerKindName[entry.kind]}</Badge>
                      ),
                    },
                    {
                      label: "Amount",
                      number: true,
                      className: "cell-strong",
                      cell: (e) => signed(e.amount),
                    },
                    { label: "Reason", cell: (entry) => entry.reason || <span className="muted">—</span> },
                    {
                      label: "Run",
                      cell: (entry) =>
                        entry.runId ? (
                          <Link className="id-link" to={path(`/runs/${entry.runId}`)}>
                            {entry.runId}
                          </Link>
                        ) : (
                          <span className="muted">—</span>
                        ),
                    },
                    { label: "Balance after", number: true, cell: (entry) => count(entry.balanceAfter) },
                  ]}
                />
              )}
            </section>
          </>
        )}
      </QueryView>
      <Pager label="Pages of the ledger" pages={pages} query={credits} />
    </>
  );
}
