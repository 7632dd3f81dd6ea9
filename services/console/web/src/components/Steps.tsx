// A test case's steps as stored or as a run ran them: an HTTP step's request (method, path, headers,
// query, body), expectations and values saved; a browser step's action, its element as Playwright
// code and what it types or checks (browser-step-text.ts). Strings show as stored: `{{NAME}}` stays
// a name, a variable's value is never part of them. With an outcome, each step says whether it passed,
// failed (with the test's summary as the reason) or did not run.
import { toJsonString } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type {
  BrowserStep,
  HttpExpectation,
  HttpRequest,
  Step,
} from "@testrun/gen/testrun/catalog/v1/step_pb";
import {
  type Artifact,
  ArtifactKind,
  type StepResult,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { ReactNode } from "react";
import { browserStepText } from "../browser-step-text";
import { duration } from "../format";
import { HttpResponse } from "./HttpResponse";
import { Badge } from "./Status";

/** How a test ended, for marking its steps. */
export interface StepOutcome {
  status: TestStatus;
  /** 1-based number of the step that failed, when the test failed at a step. */
  failedStep?: number;
  summary: string;
  /** How long each step that ran took (TestResult.step_results). */
  stepResults?: readonly StepResult[];
  /**
   * The test's artifacts: its screenshots, and a failed HTTP step's response, are shown under the
   * step they were taken at.
   */
  artifacts?: readonly Artifact[];
}

/** Where the member's browser reads an artifact: the console serves it with the session. */
export const artifactUrl = (id: string) => `/artifacts/${encodeURIComponent(id)}`;

type StepState = { tone: "good" | "bad" | "neutral"; label: string } | undefined;

function stateOf(number: number, outcome: StepOutcome | undefined): StepState {
  if (!outcome) return undefined;
  const { status, failedStep } = outcome;
  if (status === TestStatus.PASSED) return { tone: "good", label: "Passed" };
  if (status === TestStatus.FAILED && failedStep !== undefined) {
    if (number < failedStep) return { tone: "good", label: "Passed" };
    if (number === failedStep) return { tone: "bad", label: "Failed" };
    return { tone: "neutral", label: "Not run" };
  }
  if (status === TestStatus.SKIPPED) return { tone: "neutral", label: "Not run" };
  return undefined;
}

export function StepList({ steps, outcome }: { steps: Step[]; outcome?: StepOutcome }) {
  return (
    <ol className="steps">
      {steps.map((step, i) => {
        const number = i + 1;
        const state = stateOf(number, outcome);
        const failed = state?.tone === "bad";
        const took = outcome?.stepResults?.find((r) => r.number === number);
        const shots = (outcome?.artifacts ?? []).filter(
          (a) => a.kind === ArtifactKind.SCREENSHOT && a.step === number,
        );
        const response = outcome?.artifacts?.find(
          (a) => a.kind === ArtifactKind.HTTP_RESPONSE && a.step === number,
        );
        return (
          <li
            key={`${number}-${step.name}`}
            className={`step${failed ? " step-failed" : ""}${state?.label === "Not run" ? " step-not-run" : ""}`}
            aria-current={failed ? "step" : undefined}
          >
            <div className="step-head">
              <span className="step-number" aria-hidden="true">
                {number}
              </span>
              <h3>
                <span className="visually-hidden">Step {number}: </span>
                {step.name}
              </h3>
              {state && <Badge tone={state.tone}>{state.label}</Badge>}
              {took && <span className="muted small step-took">{duration(took.durationMs)}</span>}
            </div>
            {failed && outcome?.summary && (
              <p className="notice notice-error step-reason">
                <strong>Why it failed:</strong> {outcome.summary}
              </p>
            )}
            {step.kind.case === "http" ? (
              <HttpStepView
                request={step.kind.value.request}
                expect={step.kind.value.expect}
                save={step.kind.value.save}
              />
            ) : step.kind.case === "browser" ? (
              <BrowserStepView step={step.kind.value} />
            ) : (
              <p className="muted">A kind of step this console does not show yet.</p>
            )}
            {response && <HttpResponse artifact={response} url={artifactUrl(response.id)} />}
            {shots.map((shot) => (
              <Screenshot key={shot.id} shot={shot} stepName={step.name} />
            ))}
          </li>
        );
      })}
    </ol>
  );
}

/** A screenshot the browser took at a step, opening full size in a new tab. */
function Screenshot({ shot, stepName }: { shot: Artifact; stepName: string }) {
  const what = shot.name === "failure" ? "The page when the step failed" : `Screenshot “${shot.name}”`;
  return (
    <figure className="step-shot">
      <a href={artifactUrl(shot.id)} target="_blank" rel="noopener">
        <img src={artifactUrl(shot.id)} alt={`${what}, at step “${stepName}”`} loading="lazy" />
      </a>
      <figcaption className="muted small">{what} (opens full size)</figcaption>
    </figure>
  );
}

function HttpStepView({
  request,
  expect,
  save,
}: {
  request: HttpRequest | undefined;
  expect: HttpExpectation | undefined;
  save: Record<string, string>;
}) {
  const body = request?.body;
  const checks = expectationsOf(expect);
  const saves = Object.entries(save);
  return (
    <div className="step-body">
      <p className="step-request">
        <code className="method">{request?.method}</code> <code className="path">{request?.path}</code>
        {request?.timeoutMs ? (
          <span className="muted small"> · times out after {duration(request.timeoutMs)}</span>
        ) : null}
      </p>
      <Pairs title="Headers" pairs={request?.headers} />
      <Pairs title="Query" pairs={request?.query} />
      {body?.case === "json" && (
        <div className="step-part">
          <h4>JSON body</h4>
          <pre className="step-code">{toJsonString(ValueSchema, body.value, { prettySpaces: 2 })}</pre>
        </div>
      )}
      {body?.case === "raw" && (
        <div className="step-part">
          <h4>Body</h4>
          <pre className="step-code">{body.value}</pre>
        </div>
      )}
      <div className="step-part">
        <h4>Expects</h4>
        <ul className="checks">
          {checks.map((check) => (
            <li key={check.key}>{check.text}</li>
          ))}
        </ul>
      </div>
      {saves.length > 0 && (
        <div className="step-part">
          <h4>Saves</h4>
          <ul className="checks">
            {saves.map(([name, path]) => (
              <li key={name}>
                <code>{`{{${name}}}`}</code> from <code>{path}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

function BrowserStepView({ step }: { step: BrowserStep }) {
  const { action, target, lines } = browserStepText(step);
  return (
    <div className="step-body">
      <p className="step-request">
        <span className="visually-hidden">In the browser: </span>
        <code className="method">{action}</code>
        {target !== undefined && (
          <>
            {" "}
            <code className="path">{target}</code>
          </>
        )}
        {step.timeoutMs ? (
          <span className="muted small"> · times out after {duration(step.timeoutMs)}</span>
        ) : null}
      </p>
      {lines.length > 0 && (
        <ul className="checks">
          {lines.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Pairs({ title, pairs }: { title: string; pairs: Record<string, string> | undefined }) {
  const entries = Object.entries(pairs ?? {});
  if (entries.length === 0) return null;
  return (
    <div className="step-part">
      <h4>{title}</h4>
      <dl className="pairs">
        {entries.map(([name, value]) => (
          <div key={name}>
            <dt>
              <code>{name}</code>
            </dt>
            <dd>
              <code>{value}</code>
            </dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

/** Every check of an expectation in words; "status 2xx" when none is given. */
function expectationsOf(expect: HttpExpectation | undefined): { key: string; text: ReactNode }[] {
  const checks: { key: string; text: ReactNode }[] = [];
  const status = expect?.status ?? [];
  checks.push({ key: "status", text: status.length === 0 ? "Status 2xx" : `Status ${status.join(" or ")}` });
  for (const [name, text] of Object.entries(expect?.headers ?? {}))
    checks.push({
      key: `header ${name}`,
      text: (
        <>
          Header <code>{name}</code> contains “{text}”
        </>
      ),
    });
  for (const text of expect?.bodyContains ?? [])
    checks.push({ key: `contains ${text}`, text: `Body contains “${text}”` });
  for (const text of expect?.bodyNotContains ?? [])
    checks.push({ key: `lacks ${text}`, text: `Body does not contain “${text}”` });
  for (const [path, value] of Object.entries(expect?.json ?? {}))
    checks.push({
      key: `json ${path}`,
      text: (
        <>
          JSON <code>{path}</code> equals <code>{toJsonString(ValueSchema, value)}</code>
        </>
      ),
    });
  if (expect?.maxDurationMs)
    checks.push({ key: "duration", text: `Answers within ${duration(expect.maxDurationMs)}` });
  return checks;
}
