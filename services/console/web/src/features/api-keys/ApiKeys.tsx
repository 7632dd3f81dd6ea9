// Project settings, "API & CI": the key list for every member; create and revoke for Editors and
// above; how to use a key; then the content tokens, alike (ContentTokens.tsx).
import { useQuery } from "@connectrpc/connect-query";
import { type ApiKeyEntry, ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { isNotFound } from "../../api";
import { Empty, Failed, NotFound, QueryView } from "../../components/States";
import { useProject } from "../../project";
import { ContentTokens } from "./ContentTokens";
import { CreateKeyDialog } from "./CreateKeyDialog";
import { KeyTable } from "./KeyTable";
import { RevokeKeyDialog } from "./RevokeKeyDialog";
import { UsingAKey } from "./UsingAKey";

export function ApiKeys() {
  const { projectId, project, editor } = useProject();
  const keys = useQuery(ConsoleService.method.listApiKeys, { projectId });
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<ApiKeyEntry>();

  if (isNotFound(project.error) || isNotFound(keys.error)) return <NotFound what="Project" />;
  return (
    <>
      <p className="eyebrow">{project.data?.project?.name ?? "Project"} settings</p>
      <div className="page-head">
        <h1>API &amp; CI</h1>
        {editor && (
          <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
            Create API key
          </button>
        )}
      </div>
      <p className="lead">
        API keys let CI pipelines and AI agents use this project through the REST API. A key acts for the
        member who created it.
      </p>
      {project.error && <Failed error={project.error} retry={() => void project.refetch()} />}
      {project.data && !editor && (
        <p className="notice notice-info">
          Viewers can see keys and content tokens; Editors and above create and revoke them.
        </p>
      )}
      <div className="columns">
        <section aria-labelledby="keys-heading" className="column-main">
          <h2 id="keys-heading">Keys</h2>
          <QueryView
            query={keys}
            what="API keys"
            isEmpty={(data) => data.keys.length === 0}
            empty={
              <Empty title="No API keys yet.">
                <p>
                  {editor
                    ? "Create one for each pipeline or agent that uses this project."
                    : "An Editor creates them."}
                </p>
              </Empty>
            }
          >
            {(data) => <KeyTable keys={data.keys} editor={editor} onRevoke={setRevoking} />}
          </QueryView>
        </section>
        <UsingAKey />
      </div>
      <ContentTokens projectId={projectId} editor={editor} />
      <CreateKeyDialog projectId={projectId} open={creating} onClose={() => setCreating(false)} />
      <RevokeKeyDialog projectId={projectId} entry={revoking} onClose={() => setRevoking(undefined)} />
    </>
  );
}
