// What a failed HTTP step got, under the step on a test's page: the status line, the response's
// headers (values only of the allow-listed ones: the rest named), the beginning of its body with its
// size, and when each stage of the request ended. Read from the step's http-response artifact, which
// the executor redacted: a variable's value shows as `{{NAME}}` (docs/rest-api.md, "Artifacts").

import { useQuery } from "@tanstack/react-query";
import type { Artifact } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { duration } from "../format";

/** The artifact's JSON (docs/rest-api.md, "The http-response artifact"). */
interface HttpResponseEvidence {
  request: { method: string; url: string };
  status: number;
  statusText: string;
  headers: { name: string; value?: string }[];
  body: {
    text: string | null;
    truncated: boolean;
    receivedBytes: number;
    complete: boolean;
    withheld?: string;
  };
  timings: {
    connectionReused: boolean;
    dnsMs: number | null;
    connectMs: number | null;
    tlsMs: number | null;
    firstByteMs: number;
    totalMs: number;
  };
}

/** "512 B", "16 KiB", "1.5 MiB". */
function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, "KiB"] : [bytes / (1024 * 1024), "MiB"];
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
}

function bodyNote(body: HttpResponseEvidence["body"], shownBytes: number): string {
  const all = body.complete
    ? size(body.receivedBytes)
    : `more than ${size(body.receivedBytes)} (reading stopped there)`;
  if (body.receivedBytes === 0) return "empty";
  return body.truncated || !body.complete ? `first ${size(shownBytes)} of ${all}` : all;
}

/** `url`: where the member's browser reads the artifact (Steps.tsx artifactUrl). */
/** The headers, each keyed by its name and how many of that name came before it (set-cookie repeats). */
const headerRows = (headers: HttpResponseEvidence["headers"]) => {
  const seen = new Map<string, number>();
  return headers.map((header) => {
    const nth = seen.get(header.name) ?? 0;
    seen.set(header.name, nth + 1);
    return { ...header, key: `${header.name}#${nth}` };
  });
};

export function HttpResponse({ artifact, url }: { artifact: Artifact; url: string }) {
  const response = useQuery({
    queryKey: ["http-response", artifact.id],
    queryFn: async (): Promise<HttpResponseEvidence> => {
      const answer = await fetch(url, { credentials: "same-origin" });
      if (!answer.ok) throw new Error(`the response could not be read (HTTP ${answer.status})`);
      return (await answer.json()) as HttpResponseEvidence;
    },
    staleTime: Number.POSITIVE_INFINITY,
  });

  return (
    <section className="step-part step-response" aria-label="Response">
      <h4>Response</h4>
      {response.isPending ? (
        <p className="muted small">Loading the response…</p>
      ) : response.error ? (
        <p className="notice notice-error">
          The response could not be shown ({response.error.message}).{" "}
          <a href={url} target="_blank" rel="noopener">
            Open it as JSON
          </a>
        </p>
      ) : (
        <ResponseView evidence={response.data} url={url} />
      )}
    </section>
  );
}

function ResponseView({ evidence, url }: { evidence: HttpResponseEvidence; url: string }) {
  const { body, timings } = evidence;
  const shownBytes = new TextEncoder().encode(body.text ?? "").byteLength;
  const stages: [string, number | null][] = [
    ["DNS lookup", timings.dnsMs],
    ["TCP connect", timings.connectMs],
    ["TLS handshake", timings.tlsMs],
    ["First byte", timings.firstByteMs],
    ["Total", timings.totalMs],
  ];
  return (
    <>
      <p className="step-request response-status">
        <code className="method">HTTP {evidence.status}</code> <code>{evidence.statusText}</code>
        <span className="muted small">
          {" "}
          · <code>{evidence.request.method}</code> <code className="path">{evidence.request.url}</code>
        </span>
      </p>
      <div className="table-scroll">
        <table className="response-headers">
          <caption className="visually-hidden">Response headers</caption>
          <thead>
            <tr>
              <th scope="col">Header</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {headerRows(evidence.headers).map((header) => (
              <tr key={header.key}>
                <td>
                  <code>{header.name}</code>
                </td>
                <td>
                  {header.value !== undefined ? (
                    <code>{header.value}</code>
                  ) : (
                    <span className="muted small">not kept</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="muted small response-note">
        Only the values of common headers (type, length, location, caching, retry, authentication, request id)
        are kept; other headers are named.
      </p>
      <div className="step-part">
        <h4>
          Body <span className="response-size">({bodyNote(body, shownBytes)})</span>
        </h4>
        {body.text === null ? (
          <p className="notice notice-info">Not kept: {body.withheld ?? "withheld"}.</p>
        ) : body.text === "" ? (
          <p className="muted small">No body.</p>
        ) : (
          <pre className="step-code response-body">{body.text}</pre>
        )}
      </div>
      <div className="step-part">
        <h4>Timing</h4>
        <dl className="response-timings">
          {stages.map(([name, at]) => (
            <div key={name}>
              <dt>{name}</dt>
              <dd>{at === null ? "—" : duration(at)}</dd>
            </div>
          ))}
        </dl>
        <p className="muted small">
          When each stage ended, from the moment the request was sent.
          {timings.connectionReused
            ? " It went on a connection an earlier request had opened: no DNS, connect or TLS of its own."
            : ""}
        </p>
      </div>
      <p className="artifact-actions">
        <a className="button button-small" href={url} target="_blank" rel="noopener">
          Response as JSON
        </a>
      </p>
    </>
  );
}
