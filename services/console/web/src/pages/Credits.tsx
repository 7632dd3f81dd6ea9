// A project's credits: the balance and the ledger (grants, charges, refunds), newest first, paged.
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { LedgerEntryKind } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Link } from "react-router";
import { isNotFound } from "../api";
import { Pager, usePageToken } from "../components/Pager";
import { Empty, Failed, Loading, NotFound } from "../components/States";
import { Badge } from "../components/Status";
import { Time } from "../components/Time";
import { count, ledgerKindName, signed } from "../format";
import { useProject } from "../project";

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
      {credits.isPending && <Loading what="credits" />}
      {credits.error && <Failed error={credits.error} retry={() => void credits.refetch()} />}
      {credits.data && (
        <>
          <section className="panel balance" aria-label="Balance">
            <p className="balance-label">Balance</p>
            <p className="balance-value">{count(credits.data.balance)}</p>
            <p className="muted small">credits available now</p>
          </section>
          <section aria-labelledby="ledger-heading" className="section">
            <h2 id="ledger-heading">Ledger</h2>
            {credits.data.entries.length === 0 ? (
              <Empty title="No credits were granted or spent yet.">
                <p>
                  An operator grants credits with <code>testrunctl credits grant</code>.
                </p>
              </Empty>
            ) : (
              <div className="table-scroll">
                <table className="table">
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Kind</th>
                      <th scope="col" className="cell-number">
                        Amount
                      </th>
                      <th scope="col">Reason</th>
                      <th scope="col">Run</th>
                      <th scope="col" className="cell-number">
                        Balance after
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {credits.data.entries.map((entry) => (
                      <tr key={entry.id}>
                        <td data-label="When">
                          <Time at={entry.createdAt} />
                        </td>
                        <td data-label="Kind">
                          <Badge tone={kindTone[entry.kind]}>{ledgerKindName[entry.kind]}</Badge>
                        </td>
                        <td data-label="Amount" className="cell-number cell-strong">
                          {signed(entry.amount)}
                        </td>
                        <td data-label="Reason">{entry.reason || <span className="muted">—</span>}</td>
                        <td data-label="Run">
                          {entry.runId ? (
                            <Link className="id-link" to={path(`/runs/${entry.runId}`)}>
                              {entry.runId}
                            </Link>
                          ) : (
                            <span className="muted">—</span>
                          )}
                        </td>
                        <td data-label="Balance after" className="cell-number">
                          {count(entry.balanceAfter)}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
        </>
      )}
      <Pager
        label="Pages of the ledger"
        pages={pages}
        nextPageToken={credits.data?.nextPageToken}
        busy={credits.isFetching}
      />
    </>
  );
}
