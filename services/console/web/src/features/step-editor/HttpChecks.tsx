// What else an HTTP step's response must satisfy, beyond its status: headers that contain a text,
// texts the body contains or not, JSON path values, and the longest duration.
import { NumberField } from "../../components/Inputs";
import { count } from "./http-labels";
import { type HttpDraft, httpBounds } from "./http-step";
import type { Change, Said } from "./kind-editor";
import { rowField } from "./model";
import { PairRows } from "./PairRows";
import { Section } from "./Section";
import { TextRows } from "./TextRows";

export function HttpChecks({
  draft,
  change,
  said,
  attention,
}: {
  draft: HttpDraft;
  change: Change<HttpDraft>;
  said: (field: string) => Said;
  attention: boolean;
}) {
  const rows = (field: string) => (index: number) => said(rowField(field, index));
  const e = draft.expect;
  const checks = e.headers.length + e.bodyContains.length + e.bodyNotContains.length + e.json.length;
  return (
    <Section
      title="More checks on the response"
      count={count(checks + (e.maxDurationMs ? 1 : 0))}
      initiallyOpen={checks > 0 || e.maxDurationMs !== ""}
      attention={attention}
    >
      <h4 className="editor-subhead">Headers that must contain a text</h4>
      <PairRows
        label="Header check"
        nameLabel="Header"
        valueLabel="Contains (ignoring case)"
        rows={e.headers}
        onChange={(headers) =>
          change((d) => {
            d.expect.headers = headers;
          })
        }
        said={rows("expect.headers")}
        listSaid={said("expect.headers")}
        max={httpBounds.entries}
        addLabel="Add header check"
        namePlaceholder="content-type"
        valuePlaceholder="application/json"
      />
      <h4 className="editor-subhead">The body contains</h4>
      <TextRows
        label="Body contains"
        rows={e.bodyContains}
        onChange={(texts) =>
          change((d) => {
            d.expect.bodyContains = texts;
          })
        }
        said={rows("expect.bodyContains")}
        listSaid={said("expect.bodyContains")}
        max={httpBounds.entries}
        addLabel="Add text"
        placeholder="welcome"
      />
      <h4 className="editor-subhead">The body does not contain</h4>
      <TextRows
        label="Body does not contain"
        rows={e.bodyNotContains}
        onChange={(texts) =>
          change((d) => {
            d.expect.bodyNotContains = texts;
          })
        }
        said={rows("expect.bodyNotContains")}
        listSaid={said("expect.bodyNotContains")}
        max={httpBounds.entries}
        addLabel="Add text"
        placeholder="error"
      />
      <h4 className="editor-subhead">JSON values</h4>
      <p className="muted small editor-note">
        A JSON path into the body (<code>$.items[0].id</code>: <code>$</code>, <code>.name</code>,{" "}
        <code>['name']</code>, <code>[index]</code>) and the value it must equal, as JSON: <code>true</code>,{" "}
        <code>42</code>, <code>"text"</code>.
      </p>
      <PairRows
        label="JSON check"
        nameLabel="Path"
        valueLabel="Equals (JSON)"
        rows={e.json}
        onChange={(json) =>
          change((d) => {
            d.expect.json = json;
          })
        }
        said={rows("expect.json")}
        listSaid={said("expect.json")}
        max={httpBounds.entries}
        addLabel="Add JSON check"
        namePlaceholder="$.ok"
        valuePlaceholder="true"
      />
      <NumberField
        label="Longest duration (ms)"
        optional
        hint={`From sending the request to the whole response: 1 to ${httpBounds.ms.toLocaleString("en")}; empty means no limit.`}
        {...said("expect.maxDurationMs")}
        className="input input-code input-number"
        value={e.maxDurationMs}
        onChange={(ms) =>
          change((d) => {
            d.expect.maxDurationMs = ms;
          })
        }
      />
    </Section>
  );
}
