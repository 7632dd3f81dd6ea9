// Project settings, "API & CI": content tokens beside the keys. A content token (trc_…) only
// imports the project's content, as the Editor who created it: what `testrun push` uses to bring
// a repository's specs in (docs/keys.md, "Content tokens"). Listed for every member; created and
// revoked by Editors and above.
import { useQuery } from "@connectrpc/connect-query";
import { type ApiKeyEntry, ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { KeyKind } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { useState } from "react";
import { CodeBlock } from "../../components/CopyButton";
import { Empty, QueryView } from "../../components/States";
import { useSession } from "../../session";
import { CreateKeyDialog } from "./CreateKeyDialog";
import { KeyTable } from "./KeyTable";
import { RevokeKeyDialog } from "./RevokeKeyDialog";

export function ContentTokens({ projectId, editor }: { projectId: string; editor: boolean }) {
  const { apiUrl } = useSession();
  const tokens = useQuery(ConsoleService.method.listApiKeys, { projectId, kind: KeyKind.CONTENT_TOKEN });
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<ApiKeyEntry>();
  return (
    <>
      <div className="page-head section">
        <h2 id="tokens-heading">Content tokens</h2>
        {editor && (
          <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
            Create content token
          </button>
        )}
      </div>
      <p className="lead">
        A content token lets a pipeline push this project's test cases and Playwright specs (
        <code>testrun push</code>). It only imports content: it cannot start runs or read results, and it
        stops working when the member who created it is no longer an Editor.
      </p>
      <div className="columns">
        <section aria-labelledby="tokens-heading" className="column-main">
          <QueryView
            query={tokens}
            what="content tokens"
            isEmpty={(data) => data.keys.length === 0}
            empty={
              <Empty title="No content tokens yet.">
                <p>
                  {editor ? "Create one for the pipeline that pushes your specs." : "An Editor creates them."}
                </p>
              </Empty>
            }
          >
            {(data) => (
              <KeyTable keys={data.keys} editor={editor} onRevoke={setRevoking} secretLabel="Token" />
            )}
          </QueryView>
        </section>
        <aside className="panel column-side" aria-labelledby="pushing-heading">
          <h2 id="pushing-heading">Pushing specs</h2>
          <p>From the repository, in the pipeline:</p>
          <CodeBlock
            label="Push a folder of specs"
            code={`TESTRUN_URL=${apiUrl} \\\nTESTRUN_CONTENT_TOKEN=$TOKEN \\\n  npx testrun push tests/`}
          />
          <ul className="facts">
            <li>
              Starts with <code>trc_</code>; API keys start with <code>trk_</code>. Neither works in the
              other's place.
            </li>
            <li>
              Each spec file becomes one test case, matched by its path: created, updated or left alone.
            </li>
          </ul>
        </aside>
      </div>
      <CreateKeyDialog
        projectId={projectId}
        open={creating}
        onClose={() => setCreating(false)}
        kind={KeyKind.CONTENT_TOKEN}
      />
      <RevokeKeyDialog projectId={projectId} entry={revoking} onClose={() => setRevoking(undefined)} />
    </>
  );
}
