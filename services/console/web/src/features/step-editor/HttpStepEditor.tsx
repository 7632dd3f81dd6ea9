// The form of an HTTP step (step.proto, HttpStep): the request (method, path, query, headers, a
// JSON or raw body, timeout), what the response must satisfy (status codes, headers, texts in the
// body, JSON path values, longest duration), and the values saved for later steps.
import { Field } from "../../components/Field";
import { type HttpDraft, httpBounds, methods } from "./http-step";
import { rowField } from "./model";
import { PairRows, type Said, Section, TextRows } from "./Rows";

/** What every kind's editor is given (step-kinds.tsx). */
export interface KindEditorProps<Draft> {
  draft: Draft;
  onChange: (draft: Draft) => void;
  /** The messages of one of the step's fields (`request.path`, `request.headers#1`). */
  said: (field: string) => Said;
  /** Whether a field starting with one of these has a message: its section opens. */
  attention: (...prefixes: string[]) => boolean;
}

/** A size as people read it: "512 bytes", "12.5 KiB", "1.20 MiB". */
const size = (bytes: number) =>
  bytes < 1024
    ? `${bytes} bytes`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KiB`
      : `${(bytes / (1024 * 1024)).toFixed(2)} MiB`;
const encoder = new TextEncoder();

const bodyChoices: { value: HttpDraft["body"]; label: string }[] = [
  { value: "none", label: "None" },
  { value: "json", label: "JSON" },
  { value: "raw", label: "Text as written" },
];

export function HttpStepEditor({ draft, onChange, said, attention }: KindEditorProps<HttpDraft>) {
  /** A changed copy: the draft is never changed in place (React compares it). */
  const change = (edit: (copy: HttpDraft) => void) => {
    const copy = structuredClone(draft);
    edit(copy);
    onChange(copy);
  };
  const rows = (field: string) => (index: number) => said(rowField(field, index));
  const e = draft.expect;
  const rawBytes = draft.body === "raw" ? encoder.encode(draft.raw).length : 0;
  const noBody = draft.method === "GET" || draft.method === "HEAD";
  const checks = e.headers.length + e.bodyContains.length + e.bodyNotContains.length + e.json.length;

  return (
    <div className="http-step">
      <div className="editor-grid editor-grid-request">
        <Field label="Method" error={said("request.method").error}>
          {(control) => (
            <select
              {...control}
              className="input"
              value={draft.method}
              onChange={(event) =>
                change((d) => {
                  d.method = event.target.value;
                })
              }
            >
              {/* A method read from JSON that is not one of them stays shown, for the catalog to refuse. */}
              {(methods as readonly string[]).includes(draft.method) ? null : (
                <option value={draft.method}>{draft.method || "(none)"}</option>
              )}
              {methods.map((method) => (
                <option key={method}>{method}</option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="Path"
          hint={`Starts with “/”; appended to the environment's base URL. At most ${httpBounds.pathCharacters.toLocaleString("en")} characters.`}
          {...said("request.path")}
          required
        >
          {(control) => (
            <input
              {...control}
              className="input input-code"
              autoCapitalize="off"
              spellCheck={false}
              placeholder="/api/login"
              value={draft.path}
              onChange={(event) =>
                change((d) => {
                  d.path = event.target.value;
                })
              }
            />
          )}
        </Field>
      </div>
      <div className="editor-grid">
        <Field
          label="Expected status"
          optional
          hint="E.g. 200 or 200, 201 (at most 20); empty accepts any 2xx."
          {...said("expect.status")}
        >
          {(control) => (
            <input
              {...control}
              className="input input-code"
              inputMode="numeric"
              placeholder="any 2xx"
              value={e.status}
              onChange={(event) =>
                change((d) => {
                  d.expect.status = event.target.value;
                })
              }
            />
          )}
        </Field>
        <Field
          label="Timeout (ms)"
          optional
          hint={`Waits 1 to ${httpBounds.ms.toLocaleString("en")} ms for the whole response; empty: 10,000.`}
          {...said("request.timeoutMs")}
        >
          {(control) => (
            <input
              {...control}
              className="input input-code"
              inputMode="numeric"
              placeholder="10000"
              value={draft.timeoutMs}
              onChange={(event) =>
                change((d) => {
                  d.timeoutMs = event.target.value;
                })
              }
            />
          )}
        </Field>
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
          onChange={(query) =>
            change((d) => {
              d.query = query;
            })
          }
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
          onChange={(headers) =>
            change((d) => {
              d.headers = headers;
            })
          }
          said={rows("request.headers")}
          listSaid={said("request.headers")}
          max={httpBounds.entries}
          addLabel="Add header"
          namePlaceholder="Authorization"
        />
      </Section>

      <Section
        title="Body"
        count={bodyChoices.find((choice) => choice.value === draft.body)?.label}
        initiallyOpen={draft.body !== "none"}
        attention={attention("request.json", "request.raw")}
      >
        <fieldset className="field">
          <legend className="visually-hidden">Body</legend>
          <div className="choices">
            {bodyChoices.map((choice) => (
              <label key={choice.value} className="choice">
                <input
                  type="radio"
                  checked={draft.body === choice.value}
                  disabled={noBody && choice.value !== "none" && draft.body !== choice.value}
                  onChange={() =>
                    change((d) => {
                      d.body = choice.value;
                    })
                  }
                />
                {choice.label}
              </label>
            ))}
          </div>
          {noBody && <small>{draft.method} requests carry no body.</small>}
        </fieldset>
        {draft.body === "json" && (
          <Field
            label="JSON body"
            hint="Sent with Content-Type: application/json unless a header sets another. Text values may use {{NAME}}."
            {...said("request.json")}
          >
            {(control) => (
              <textarea
                {...control}
                className="input input-code"
                rows={Math.min(14, Math.max(4, draft.json.split("\n").length + 1))}
                spellCheck={false}
                placeholder={'{ "user": "{{DEMO_USER}}" }'}
                value={draft.json}
                onChange={(event) =>
                  change((d) => {
                    d.json = event.target.value;
                  })
                }
              />
            )}
          </Field>
        )}
        {draft.body === "raw" && (
          <Field
            label="Body as written"
            hint={`${size(rawBytes)} of 1 MiB (UTF-8). Set a Content-Type header yourself. May use {{NAME}}.`}
            {...said("request.raw")}
          >
            {(control) => (
              <textarea
                {...control}
                className="input input-code"
                rows={6}
                spellCheck={false}
                value={draft.raw}
                onChange={(event) =>
                  change((d) => {
                    d.raw = event.target.value;
                  })
                }
              />
            )}
          </Field>
        )}
        {rawBytes > httpBounds.bodyBytes && (
          <p className="notice notice-warning">
            This body is {size(rawBytes)}: a step's body holds at most 1 MiB.
          </p>
        )}
      </Section>

      <Section
        title="More checks on the response"
        count={count(checks + (e.maxDurationMs ? 1 : 0))}
        initiallyOpen={checks > 0 || e.maxDurationMs !== ""}
        attention={attention("expect.headers", "expect.body", "expect.json", "expect.maxDurationMs")}
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
          <code>['name']</code>, <code>[index]</code>) and the value it must equal, as JSON: <code>true</code>
          , <code>42</code>, <code>"text"</code>.
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
        <Field
          label="Longest duration (ms)"
          optional
          hint={`From sending the request to the whole response: 1 to ${httpBounds.ms.toLocaleString("en")}; empty means no limit.`}
          {...said("expect.maxDurationMs")}
        >
          {(control) => (
            <input
              {...control}
              className="input input-code input-number"
              inputMode="numeric"
              value={e.maxDurationMs}
              onChange={(event) =>
                change((d) => {
                  d.expect.maxDurationMs = event.target.value;
                })
              }
            />
          )}
        </Field>
      </Section>

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
          onChange={(save) =>
            change((d) => {
              d.save = save;
            })
          }
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

const count = (n: number) => (n === 0 ? undefined : String(n));
