// A project's health settings among "Manage project" (Admins): the window a case's state is judged
// on (its latest results, and days), the results needed before a case is judged, and how long
// results stay in the history. Each field shows its bounds; RunsService checks them too.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { HealthSettings as Settings } from "@testrun/gen/testrun/runs/v1/health_pb";
import { useState } from "react";
import { Dialog, DialogActions, ErrorNotice } from "../../components/Dialog";
import { NumberField } from "../../components/Inputs";
import { useInvalidate } from "../../components/useInvalidate";

type Key = "windowResults" | "windowDays" | "minResults" | "historyRetentionDays";
const fields: { key: Key; label: string; min: number; max: number }[] = [
  { key: "windowResults", label: "Window: latest results", min: 5, max: 200 },
  { key: "windowDays", label: "Window: days", min: 1, max: 90 },
  { key: "minResults", label: "Minimum results", min: 2, max: 50 },
  { key: "historyRetentionDays", label: "History kept (days)", min: 7, max: 365 },
];

export function HealthSettingsSetting({ projectId }: { projectId: string }) {
  const [open, setOpen] = useState(false);
  const read = useQuery(ConsoleService.method.getHealthSettings, { projectId });
  const s = read.data?.settings;
  return (
    <div className="setting">
      <p>
        Test health:{" "}
        {s
          ? `judged on the latest ${s.windowResults} results within ${s.windowDays} days, from ${s.minResults} results; history kept ${s.historyRetentionDays} days.`
          : "reading…"}
      </p>
      <button type="button" className="button" disabled={!s} onClick={() => setOpen(true)}>
        Change health settings
      </button>
      {s && open && (
        <HealthSettingsDialog projectId={projectId} settings={s} onClose={() => setOpen(false)} />
      )}
    </div>
  );
}

function HealthSettingsDialog({
  projectId,
  settings,
  onClose,
}: {
  projectId: string;
  settings: Settings;
  onClose: () => void;
}) {
  const invalidate = useInvalidate();
  const update = useMutation(ConsoleService.method.updateHealthSettings);
  const [draft, setDraft] = useState(
    () => Object.fromEntries(fields.map((f) => [f.key, String(settings[f.key])])) as Record<Key, string>,
  );
  const errorOf = (f: (typeof fields)[number]) => {
    const n = Number(draft[f.key]);
    if (!Number.isInteger(n) || n < f.min || n > f.max) return `From ${f.min} to ${f.max}.`;
    if (f.key === "minResults" && n > Number(draft.windowResults)) return "At most the window's results.";
    return undefined;
  };
  const invalid = fields.some((f) => errorOf(f));
  return (
    <Dialog title="Health settings" open onClose={onClose}>
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          const next = Object.fromEntries(fields.map((f) => [f.key, Number(draft[f.key])])) as Record<
            Key,
            number
          >;
          update.mutate(
            { projectId, settings: next },
            {
              onSuccess: async () => {
                await invalidate(ConsoleService.method.getHealthSettings);
                onClose();
              },
            },
          );
        }}
      >
        <p className="muted small">
          Results already recorded keep the state they gave; each case's next result is judged with these.
        </p>
        {fields.map((f) => (
          <NumberField
            key={f.key}
            label={f.label}
            // The error says the bounds itself: the hint would only repeat them under it.
            hint={errorOf(f) ? undefined : `${f.min} to ${f.max}.`}
            error={errorOf(f)}
            value={draft[f.key]}
            onChange={(value) => setDraft({ ...draft, [f.key]: value })}
          />
        ))}
        <ErrorNotice error={update.error} />
        <DialogActions
          onCancel={onClose}
          label="Save"
          busyLabel="Saving…"
          busy={update.isPending}
          disabled={invalid}
        />
      </form>
    </Dialog>
  );
}
