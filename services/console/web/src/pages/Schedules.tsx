// A project's schedules: runs started on their own at the times a cron expression gives. Every
// member reads them; Editors and above create, edit, pause, resume and delete them
// (AutomationService decides; docs/console.md, "Schedules").
import { create } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type Schedule, ScheduleState } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { TagListSchema } from "@testrun/gen/testrun/common/v1/selection_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useEffect, useId, useMemo, useRef, useState } from "react";
import { Link, useParams } from "react-router";
import { fieldViolationsOf, formErrors, isNotFound } from "../api";
import {
  cronInWords,
  knownTimeZones,
  scheduleStateName,
  scheduleStateTone,
  scheduleWhat,
  tickTime,
} from "../automation-format";
import { DataTable } from "../components/DataTable";
import { Dialog, DialogActions, ErrorNotice } from "../components/Dialog";
import { Fact, Facts } from "../components/Facts";
import { Field, FieldSet, useFocusOnError } from "../components/Field";
import { Empty, NotFound, QueryView } from "../components/States";
import { Badge } from "../components/Status";
import { Time } from "../components/Time";
import { sentence } from "../format";
import { useProject } from "../project";

/** What a dialog is open for. */
type Editing =
  | { kind: "create" }
  | { kind: "edit"; schedule: Schedule }
  | { kind: "delete"; schedule: Schedule };

/** The names of the project's plans and environments, to show beside the ids a schedule holds. */
function useNames(projectId: string) {
  const plans = useQuery(ConsoleService.method.listTestPlans, { projectId });
  const environments = useQuery(ConsoleService.method.listEnvironments, { projectId });
  return useMemo(
    () => ({
      plans: plans.data?.testPlans ?? [],
      environments: environments.data?.environments ?? [],
      planNames: new Map((plans.data?.testPlans ?? []).map((p) => [p.id, p.name])),
      environmentNames: new Map((environments.data?.environments ?? []).map((e) => [e.id, e.name])),
    }),
    [plans.data, environments.data],
  );
}

export function Schedules() {
  const { projectId, project, name, editor, path } = useProject();
  const schedules = useQuery(ConsoleService.method.listSchedules, { projectId });
  const names = useNames(projectId);
  const [editing, setEditing] = useState<Editing>();
  const [done, setDone] = useState<string>();
  const pause = usePauseResume(projectId, setDone);
  if (isNotFound(project.error) || isNotFound(schedules.error)) return <NotFound what="Project" />;
  const open = (next: Editing) => {
    setDone(undefined);
    pause.reset();
    setEditing(next);
  };
  return (
    <>
      <p className="eyebrow">{name}</p>
      <div className="page-head">
        <h1>Schedules</h1>
        {editor && (
          <button type="button" className="button button-primary" onClick={() => open({ kind: "create" })}>
            New schedule
          </button>
        )}
      </div>
      <p className="lead">
        Runs that start on their own: a test plan or tags on an environment, at the times a cron expression
        gives. Each run spends credits like any other and acts for the member who made the schedule, last
        resumed it or last changed what it runs.
      </p>
      {project.data && !editor && (
        <p className="notice notice-info">Viewers see the schedules; Editors and above change them.</p>
      )}
      {done && (
        <p className="notice notice-info" role="status">
          {done}
        </p>
      )}
      <ErrorNotice error={pause.error} />
      <QueryView
        query={schedules}
        what="schedules"
        isEmpty={(data) => data.schedules.length === 0}
        empty={
          <Empty title="No schedules yet.">
            <p>
              {editor
                ? "Create one to run a plan every hour against production, or every night against staging."
                : "An Editor creates them."}
            </p>
          </Empty>
        }
      >
        {(data) => (
          <DataTable
            rows={data.schedules}
            columns={[
              {
                label: "Name",
                className: "cell-strong",
                cell: (s) => <Link to={path(`/schedules/${s.id}`)}>{s.name}</Link>,
              },
              { label: "Runs", cell: (s) => scheduleWhat(s, names.planNames) },
              {
                label: "Environment",
                cell: (s) => names.environmentNames.get(s.environmentId) ?? s.environmentId,
              },
              { label: "When", cell: (s) => <CronText cron={s.cron} timeZone={s.timeZone} /> },
              { label: "State", cell: (s) => <ScheduleStateText schedule={s} /> },
              {
                label: "Next run",
                cell: (s) =>
                  s.state === ScheduleState.ACTIVE ? (
                    <Time at={s.nextTicks[0]} />
                  ) : (
                    <span className="muted">—</span>
                  ),
              },
            ]}
            actions={
              editor
                ? (s) => (
                    <div className="row-actions">
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`${s.state === ScheduleState.ACTIVE ? "Pause" : "Resume"} ${s.name}`}
                        disabled={pause.isPending}
                        onClick={() => pause.toggle(s)}
                      >
                        {s.state === ScheduleState.ACTIVE ? "Pause" : "Resume"}
                      </button>
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`Edit ${s.name}`}
                        onClick={() => open({ kind: "edit", schedule: s })}
                      >
                        Edit
                      </button>
                      <button
                        type="button"
                        className="button button-small button-danger"
                        aria-label={`Delete ${s.name}`}
                        onClick={() => open({ kind: "delete", schedule: s })}
                      >
                        Delete
                      </button>
                    </div>
                  )
                : undefined
            }
          />
        )}
      </QueryView>
      {(editing?.kind === "create" || editing?.kind === "edit") && (
        <ScheduleDialog
          projectId={projectId}
          schedule={editing.kind === "edit" ? editing.schedule : undefined}
          names={names}
          onClose={() => setEditing(undefined)}
          onSaved={setDone}
        />
      )}
      <DeleteScheduleDialog
        projectId={projectId}
        schedule={editing?.kind === "delete" ? editing.schedule : undefined}
        onClose={() => setEditing(undefined)}
        onDeleted={setDone}
      />
    </>
  );
}

/** The cron expression as typed, with its meaning in words when it is a common one, and its zone. */
function CronText({ cron, timeZone }: { cron: string; timeZone: string }) {
  const words = cronInWords(cron);
  return (
    <span className="cell-lines">
      <span>
        <code>{cron}</code>
        {words && <span className="muted"> ({words})</span>}
      </span>
      <span className="muted small">{timeZone || "UTC"}</span>
    </span>
  );
}

function ScheduleStateText({ schedule }: { schedule: Schedule }) {
  return (
    <span className="cell-lines">
      <Badge tone={scheduleStateTone[schedule.state]}>{scheduleStateName[schedule.state]}</Badge>
      {schedule.state === ScheduleState.STOPPED && schedule.stoppedReason && (
        <span className="small">{sentence(schedule.stoppedReason)}</span>
      )}
    </span>
  );
}

/** Pauses an active schedule, or resumes a paused or stopped one, and says so. */
function usePauseResume(projectId: string, say: (message: string) => void) {
  const queryClient = useQueryClient();
  const update = useMutation(ConsoleService.method.updateSchedule);
  return {
    isPending: update.isPending,
    error: update.error,
    reset: update.reset,
    toggle: (schedule: Schedule) => {
      const paused = schedule.state === ScheduleState.ACTIVE;
      update.mutate(
        { projectId, scheduleId: schedule.id, paused },
        {
          onSuccess: async () => {
            await queryClient.invalidateQueries();
            say(
              paused ? `${schedule.name} paused.` : `${schedule.name} resumed: it acts for you from now on.`,
            );
          },
        },
      );
    },
  };
}

/** A value that follows `value` once it stayed the same for `ms` (the preview asks as typing pauses). */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** New schedule, or editing one. The next three times show as the cron expression is typed. */
function ScheduleDialog({
  projectId,
  schedule,
  names,
  onClose,
  onSaved,
}: {
  projectId: string;
  schedule: Schedule | undefined;
  names: ReturnType<typeof useNames>;
  onClose: () => void;
  onSaved: (message: string) => void;
}) {
  const queryClient = useQueryClient();
  const createSchedule = useMutation(ConsoleService.method.createSchedule);
  const update = useMutation(ConsoleService.method.updateSchedule);
  const save = schedule ? update : createSchedule;
  const defaultEnvironment = names.environments.find((e) => e.isDefault) ?? names.environments[0];
  const [name, setName] = useState(schedule?.name ?? "");
  const [by, setBy] = useState<"plan" | "tags">(schedule?.selection.case === "tags" ? "tags" : "plan");
  const [planId, setPlanId] = useState(
    schedule?.selection.case === "testPlanId" ? schedule.selection.value : (names.plans[0]?.id ?? ""),
  );
  const [tags, setTags] = useState(
    schedule?.selection.case === "tags" ? schedule.selection.value.tags.join(", ") : "",
  );
  const [environmentId, setEnvironmentId] = useState(schedule?.environmentId ?? defaultEnvironment?.id ?? "");
  const [cron, setCron] = useState(schedule?.cron ?? "0 * * * *");
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const [timeZone, setTimeZone] = useState(schedule?.timeZone ?? browserZone);
  const [startPaused, setStartPaused] = useState(false);
  const zonesId = useId();
  const zones = useMemo(knownTimeZones, []);
  const form = useRef<HTMLFormElement>(null);
  useFocusOnError(form, save.error);

  const asked = useSettled({ cron, timeZone }, 300);
  const preview = useQuery(
    ConsoleService.method.previewSchedule,
    { projectId, cron: asked.cron, timeZone: asked.timeZone },
    { enabled: asked.cron.trim() !== "", retry: false, placeholderData: (previous) => previous },
  );
  const typing = asked.cron !== cron || asked.timeZone !== timeZone;
  const previewAt = (field: string) =>
    !typing ? fieldViolationsOf(preview.error).find((v) => v.field === field)?.description : undefined;
  const errors = formErrors(save, { name, cron, time_zone: timeZone, environment_id: environmentId });
  const tagList = tags
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const selection =
      by === "plan"
        ? { case: "testPlanId" as const, value: planId }
        : { case: "tags" as const, value: create(TagListSchema, { tags: tagList }) };
    const fields = { projectId, name, cron, timeZone, environmentId, selection };
    const done = async (saved: Schedule | undefined) => {
      await queryClient.invalidateQueries();
      onSaved(`${saved?.name ?? name} ${schedule ? "saved" : "created"}.`);
      onClose();
    };
    if (schedule)
      update.mutate({ ...fields, scheduleId: schedule.id }, { onSuccess: (answer) => done(answer.schedule) });
    else
      createSchedule.mutate(
        { ...fields, paused: startPaused },
        { onSuccess: (answer) => done(answer.schedule) },
      );
  };

  const cronError = errors.at("cron") ?? (previewAt("cron") && sentence(previewAt("cron") ?? ""));
  const zoneError =
    errors.at("time_zone") ?? (previewAt("time_zone") && sentence(previewAt("time_zone") ?? ""));
  return (
    <Dialog title={schedule ? `Edit ${schedule.name}` : "New schedule"} open onClose={onClose}>
      <form ref={form} className="stack" onSubmit={submit} noValidate>
        <Field
          label="Name"
          hint="Runs it starts are named “<name> (scheduled)”. At most 100 characters."
          error={errors.at("name")}
          required
        >
          {(control) => (
            <input
              {...control}
              className="input"
              autoFocus
              maxLength={100}
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          )}
        </Field>
        <FieldSet legend="What to run">
          <div className="choices">
            <label className="choice">
              <input type="radio" name="schedule-by" checked={by === "plan"} onChange={() => setBy("plan")} />
              A test plan
            </label>
            <label className="choice">
              <input type="radio" name="schedule-by" checked={by === "tags"} onChange={() => setBy("tags")} />
              Test cases with tags
            </label>
          </div>
        </FieldSet>
        {by === "plan" ? (
          <Field
            label="Test plan"
            required
            hint={names.plans.length === 0 ? "The project has no test plans yet." : undefined}
          >
            {(control) => (
              <select
                {...control}
                className="input"
                value={planId}
                onChange={(e) => setPlanId(e.target.value)}
              >
                {planId === "" && <option value="">Choose a test plan</option>}
                {names.plans.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : (
          <Field
            label="Tags"
            required
            hint="Separated by commas: every enabled test case with any of them runs."
          >
            {(control) => (
              <input
                {...control}
                className="input"
                value={tags}
                autoCapitalize="off"
                onChange={(e) => setTags(e.target.value)}
              />
            )}
          </Field>
        )}
        <Field label="Environment" error={errors.at("environment_id")} required>
          {(control) => (
            <select
              {...control}
              className="input"
              value={environmentId}
              onChange={(e) => setEnvironmentId(e.target.value)}
            >
              {environmentId === "" && <option value="">Choose an environment</option>}
              {names.environments.map((env) => (
                <option key={env.id} value={env.id}>
                  {env.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="Cron expression"
          error={cronError || undefined}
          required
          hint={
            <>
              Five fields: minute, hour, day of month, month, day of week. E.g. <code>0 * * * *</code> every
              hour, <code>30 2 * * 1-5</code> at 02:30 on weekdays.
            </>
          }
        >
          {(control) => (
            <input
              {...control}
              className="input input-code"
              autoCapitalize="off"
              spellCheck={false}
              value={cron}
              onChange={(e) => setCron(e.target.value)}
            />
          )}
        </Field>
        <Field
          label="Time zone"
          error={zoneError || undefined}
          required
          hint="An IANA time zone, e.g. Europe/Berlin or UTC."
        >
          {(control) => (
            <>
              <input
                {...control}
                className="input"
                list={zonesId}
                autoCapitalize="off"
                spellCheck={false}
                value={timeZone}
                onChange={(e) => setTimeZone(e.target.value)}
              />
              <datalist id={zonesId}>
                {zones.map((zone) => (
                  <option key={zone} value={zone} />
                ))}
              </datalist>
            </>
          )}
        </Field>
        <NextTicks
          pending={typing || preview.isFetching}
          ticks={preview.error || cron.trim() === "" ? [] : (preview.data?.nextTicks ?? [])}
          timeZone={asked.timeZone}
          failed={preview.error && fieldViolationsOf(preview.error).length === 0 ? preview.error : undefined}
        />
        {!schedule && (
          <label className="checkbox-field">
            <input type="checkbox" checked={startPaused} onChange={(e) => setStartPaused(e.target.checked)} />
            <span>
              <strong>Start paused</strong>
              <br />
              <span className="muted small">It runs nothing until someone resumes it.</span>
            </span>
          </label>
        )}
        {errors.other && <ErrorNotice error={save.error} />}
        <DialogActions
          onCancel={onClose}
          label={schedule ? "Save" : "Create schedule"}
          busyLabel="Saving…"
          busy={save.isPending}
        />
      </form>
    </Dialog>
  );
}

/** The next three times, live while the expression is typed. */
function NextTicks({
  ticks,
  timeZone,
  pending,
  failed,
}: {
  ticks: Schedule["nextTicks"];
  timeZone: string;
  pending: boolean;
  failed: unknown;
}) {
  return (
    <section className="panel" aria-labelledby="next-ticks-heading" aria-live="polite" aria-busy={pending}>
      <h3 id="next-ticks-heading" className="small">
        Next runs
      </h3>
      {failed ? (
        <ErrorNotice error={failed} />
      ) : ticks.length === 0 ? (
        <p className="muted small">
          {pending ? "Working them out…" : "Fix the expression to see when it runs."}
        </p>
      ) : (
        <ol className="next-ticks" data-testid="next-ticks">
          {ticks.map((tick) => (
            <li key={`${tick.seconds}`}>{tickTime(tick, timeZone)}</li>
          ))}
        </ol>
      )}
    </section>
  );
}

function DeleteScheduleDialog({
  projectId,
  schedule,
  onClose,
  onDeleted,
}: {
  projectId: string;
  schedule: Schedule | undefined;
  onClose: () => void;
  onDeleted: (message: string) => void;
}) {
  const queryClient = useQueryClient();
  const remove = useMutation(ConsoleService.method.deleteSchedule);
  const close = () => {
    remove.reset();
    onClose();
  };
  return (
    <Dialog title={`Delete ${schedule?.name ?? "schedule"}?`} open={schedule !== undefined} onClose={close}>
      <div className="stack">
        <p>It starts no more runs, and its record of ticks goes with it. The runs it started stay.</p>
        <ErrorNotice error={remove.error} />
        <DialogActions
          onCancel={close}
          label="Delete schedule"
          busyLabel="Deleting…"
          busy={remove.isPending}
          danger
          onConfirm={() =>
            remove.mutate(
              { projectId, scheduleId: schedule?.id ?? "" },
              {
                onSuccess: async () => {
                  await queryClient.invalidateQueries();
                  onDeleted(`${schedule?.name ?? "The schedule"} deleted.`);
                  close();
                },
              },
            )
          }
        />
      </div>
    </Dialog>
  );
}

/** One schedule: what it runs and when, and its recent ticks (the run each started, or why none). */
export function ScheduleView() {
  const { scheduleId = "" } = useParams();
  const { projectId, project, path, editor } = useProject();
  const got = useQuery(ConsoleService.method.getSchedule, { projectId, scheduleId });
  const names = useNames(projectId);
  const [done, setDone] = useState<string>();
  const pause = usePauseResume(projectId, setDone);
  if (isNotFound(got.error) || isNotFound(project.error)) return <NotFound what="Schedule" />;
  if (got.isPending || got.error) return <QueryView query={got} what="the schedule" />;
  const { schedule, recentTicks } = got.data;
  if (!schedule) return <NotFound what="Schedule" />;
  const ticks = recentTicks.map((tick, i) => ({ id: `${tick.dueAt?.seconds ?? i}-${i}`, tick }));
  return (
    <>
      <p className="eyebrow">
        <Link to={path("/schedules")}>Schedules</Link>
      </p>
      <div className="page-head">
        <h1>{schedule.name}</h1>
        {editor && (
          <button
            type="button"
            className="button"
            disabled={pause.isPending}
            onClick={() => pause.toggle(schedule)}
          >
            {schedule.state === ScheduleState.ACTIVE ? "Pause" : "Resume"}
          </button>
        )}
      </div>
      {done && (
        <p className="notice notice-info" role="status">
          {done}
        </p>
      )}
      <ErrorNotice error={pause.error} />
      <Facts>
        <Fact term="Runs">{scheduleWhat(schedule, names.planNames)}</Fact>
        <Fact term="Environment">
          {names.environmentNames.get(schedule.environmentId) ?? schedule.environmentId}
        </Fact>
        <Fact term="When">
          <CronText cron={schedule.cron} timeZone={schedule.timeZone} />
        </Fact>
        <Fact term="State">
          <ScheduleStateText schedule={schedule} />
        </Fact>
        <Fact term="Created">
          <Time at={schedule.createdAt} />
        </Fact>
      </Facts>
      {schedule.state === ScheduleState.ACTIVE && schedule.nextTicks.length > 0 && (
        <>
          <h2>Next runs</h2>
          <ol className="next-ticks">
            {schedule.nextTicks.map((tick) => (
              <li key={`${tick.seconds}`}>{tickTime(tick, schedule.timeZone)}</li>
            ))}
          </ol>
        </>
      )}
      <h2>Recent ticks</h2>
      {ticks.length === 0 ? (
        <Empty title="No ticks yet.">
          <p>Each time it is due, the run it starts (or why none could start) shows here.</p>
        </Empty>
      ) : (
        <DataTable
          rows={ticks}
          columns={[
            { label: "Due", cell: ({ tick }) => <Time at={tick.dueAt} /> },
            {
              label: "Outcome",
              cell: ({ tick }) =>
                tick.runId ? (
                  <Link to={path(`/runs/${tick.runId}`)}>Run started</Link>
                ) : (
                  <span className="cell-lines">
                    <Badge tone="bad">Not started</Badge>
                    <span className="small">{sentence(tick.failure || "no reason recorded")}</span>
                  </span>
                ),
            },
          ]}
        />
      )}
    </>
  );
}
