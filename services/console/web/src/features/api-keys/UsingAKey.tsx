import { CodeBlock } from "../../components/CopyButton";
import { useSession } from "../../session";

/** How to send a key, and the limits that go with it. */
export function UsingAKey() {
  const { apiUrl } = useSession();
  return (
    <aside className="panel column-side" aria-labelledby="using-heading">
      <h2 id="using-heading">Using a key</h2>
      <p>Send it in either header:</p>
      <CodeBlock label="Headers" code={"Authorization: Bearer <key>\nX-Api-Key: <key>"} />
      <p>Try it:</p>
      <CodeBlock
        label="Read the project"
        code={`curl -H "Authorization: Bearer $TESTRUN_API_KEY" \\\n  ${apiUrl}/v1/project`}
      />
      <p>Start a run of a test plan:</p>
      <CodeBlock
        label="Start a run"
        code={`curl -X POST -H "Authorization: Bearer $TESTRUN_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"testPlan": "Smoke"}' ${apiUrl}/v1/runs`}
      />
      <ul className="facts">
        <li>
          Poll a run at most every <strong>15 seconds</strong> until it finishes.
        </li>
        <li>
          A key may make <strong>60 requests a minute</strong>, shared by everything using it; beyond that the
          API answers 429 with <code>Retry-After</code>.
        </li>
        <li>
          <strong>Rotate without interruption:</strong> create the new key, put it in the pipeline's secrets,
          then revoke the old one.
        </li>
        <li>Use one key per pipeline or agent, so you can revoke one without stopping the others.</li>
      </ul>
    </aside>
  );
}
