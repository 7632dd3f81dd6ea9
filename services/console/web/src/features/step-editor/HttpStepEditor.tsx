// The form of an HTTP step (step.proto, HttpStep): the request (method, path, query, headers, a
// JSON or raw body in HttpBody.tsx, timeout), what the response must satisfy (status codes, then
// HttpChecks.tsx: headers, texts in the body, JSON path values, longest duration), and the values
// saved for later steps.
import { CodeField, NumberField, SelectField } from "../../components/Inputs";
import { HttpBody } from "./HttpBody";
import { HttpChecks } from "./HttpChecks";
import { count } from "./http-labels";
import { type HttpDraft, httpBounds, methods } from "./http-step";
import { changer, type KindEditorProps, setter } from "./kind-editor";
import { rowField } from "./model";
import { PairRows } from "./PairRows";
import { Section } from "./Section";

export function HttpStepEditor({ draft, onChange, said, attention }: KindEditorProps<HttpDraft>) {
  const change = changer(draft, onChange);
  const set = setter(change);
  const rows = (field: string) => (index: number) => said(rowField(field, index));

  return (
    <div className="http-step">
      <div className="editor-grid editor-grid-request">
        <SelectField
          label="Method"
          error={said("request.method").error}
          value={draft.method}
          onChange={set("method")}
        >
          {/* A method read from JSON that is not one of them stays shown, for the catalog to refuse. */}
          {(methods as readonly string[]).includes(draft.method) ? null : (
            <option value={draft.method}>{draft.method || "(none)"}</option>
          )}
          {methods.map((method) => (
            <option key={method}>{method}</option>
          ))}
        </SelectField>
        <CodeField
          label="Path"
          hint={`Starts with “/”; appended to the environment's base URL. At most ${httpBounds.pathCharacters.toLocaleString("en")} characters.`}
          {...said("request.path")}
          required
          placeholder="/api/login"
          value={draft.path}
          onChange={set("path")}
        />
      </div>
      <div className="editor-grid">
        <NumberField
          label="Expected status"
          optional
          hint="E.g. 200 or 200, 201 (at most 20); empty accepts any 2xx."
          {...said("expect.status")}
          placeholder="any 2xx"
          value={draft.expect.status}
          onChange={(status) =>
            change((d) => {
              d.expect.status = status;
            })
          }
        />
        <NumberField
          label="Timeout (ms)"
          optional
          hint={`Waits 1 to ${httpBounds.ms.toLocaleString("en")} ms for the whole response; empty: 10,000.`}
          {...said("request.timeoutMs")}
          placeholder="10000"
          value={draft.timeoutMs}
          onChange={set("timeoutMs")}
        />
      </div>

      <Section
        title="Query parameters"
        count={count(draft.query.length)}
        initiallyOpen={draft.query.length > 0}
        attention={attention("request.query")}
      >
        <p className="muted small editor-note">
          Added to any query string in the path, URL-encoded. Values may use {"{{NAME}}"}.
        </p>
        <PairRows
          label="Parameter"
          nameLabel="Name"
          valueLabel="Value"
          rows={draft.query}
          onChange={set("query")}
          said={rows("request.query")}
          listSaid={said("request.query")}
          max={httpBounds.entries}
          addLabel="Add parameter"
          namePlaceholder="page"
        />
      </Section>

      <Section
        title="Headers"
        count={count(draft.headers.length)}
        initiallyOpen={draft.headers.length > 0}
        attention={attention("request.headers")}
      >
        <p className="muted small editor-note">
          Host and Content-Length are set for you. Keep secrets in variables:{" "}
          <code>Bearer {"{{TOKEN}}"}</code>.
        </p>
        <PairRows
          label="Header"
          nameLabel="Name"
          valueLabel="Value"
          rows={draft.headers}
          onChange={set("headers")}
          said={rows("request.headers")}
          listSaid={said("request.headers")}
          max={httpBounds.entries}
          addLabel="Add header"
          namePlaceholder="Authorization"
        />
      </Section>

      <HttpBody
        draft={draft}
        change={change}
        said={said}
        attention={attention("request.json", "request.raw")}
      />

      <HttpChecks
        draft={draft}
        change={change}
        said={said}
        attention={attention("expect.headers", "expect.body", "expect.json", "expect.maxDurationMs")}
      />

      <Section
        title="Save values for later steps"
        count={count(draft.save.length)}
        initiallyOpen={draft.save.length > 0}
        attention={attention("save")}
      >
        <p className="muted small editor-note">
          After the checks pass, each name takes the value at a JSON path of the body; later steps use it as{" "}
          <code>{"{{name}}"}</code>.
        </p>
        <PairRows
          label="Saved value"
          nameLabel="Name"
          valueLabel="From JSON path"
          rows={draft.save}
          onChange={set("save")}
          said={rows("save")}
          listSaid={said("save")}
          max={httpBounds.entries}
          addLabel="Add value to save"
          namePlaceholder="token"
          valuePlaceholder="$.token"
        />
      </Section>
    </div>
  );
}
