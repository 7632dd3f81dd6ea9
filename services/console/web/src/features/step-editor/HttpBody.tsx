// The body of an HTTP step's request: none, JSON (with Content-Type set for it) or text as
// written, whose size is shown against the step's bound.
import { TextAreaField } from "../../components/Inputs";
import { bodyChoices, size } from "./http-labels";
import { type HttpDraft, httpBounds } from "./http-step";
import { type Change, type Said, setter } from "./kind-editor";
import { Section } from "./Section";

const encoder = new TextEncoder();

export function HttpBody({
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
  const set = setter(change);
  const rawBytes = draft.body === "raw" ? encoder.encode(draft.raw).length : 0;
  const noBody = draft.method === "GET" || draft.method === "HEAD";
  return (
    <Section
      title="Body"
      count={bodyChoices.find((choice) => choice.value === draft.body)?.label}
      initiallyOpen={draft.body !== "none"}
      attention={attention}
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
        <TextAreaField
          label="JSON body"
          hint="Sent with Content-Type: application/json unless a header sets another. Text values may use {{NAME}}."
          {...said("request.json")}
          className="input input-code"
          rows={Math.min(14, Math.max(4, draft.json.split("\n").length + 1))}
          spellCheck={false}
          placeholder={'{ "user": "{{DEMO_USER}}" }'}
          value={draft.json}
          onChange={set("json")}
        />
      )}
      {draft.body === "raw" && (
        <TextAreaField
          label="Body as written"
          hint={`${size(rawBytes)} of 1 MiB (UTF-8). Set a Content-Type header yourself. May use {{NAME}}.`}
          {...said("request.raw")}
          className="input input-code"
          rows={6}
          spellCheck={false}
          value={draft.raw}
          onChange={set("raw")}
        />
      )}
      {rawBytes > httpBounds.bodyBytes && (
        <p className="notice notice-warning">
          This body is {size(rawBytes)}: a step's body holds at most 1 MiB.
        </p>
      )}
    </Section>
  );
}
