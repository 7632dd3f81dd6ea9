// New schedule, or editing one. The next three times show as the cron expression is typed.
import { create } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import type { Schedule } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { TagListSchema } from "@testrun/gen/testrun/common/v1/selection_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useId, useMemo, useRef, useState } from "react";
import { fieldViolationsOf, formErrors } from "../../api";
import { knownTimeZones } from "../../automation-format";
import { Dialog, DialogActions, ErrorNotice } from "../../components/Dialog";
import { FieldSet, useFocusOnError } from "../../components/Field";
import { CodeField, SelectField, TextField } from "../../components/Inputs";
import { useInvalidate } from "../../components/useInvalidate";
import { sentence } from "../../format";
import { NextTicks } from "./NextTicks";
import type { Names } from "./names";
import { scheduleQueries } from "./pause";
import { useSettled } from "./useSettled";

export function ScheduleDialog({
  projectId,
  schedule,
  names,
  onClose,
  onSaved,
}: {
  projectId: string;
  schedule: Schedule | undefined;
  names: Names;
  onClose: () => void;
  onSaved: (message: string) => void;
}) {
  const invalidate = useInvalidate();
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
      await invalidate(...scheduleQueries);
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
        <TextField
          label="Name"
          hint="Runs it starts are named “<name> (scheduled)”. At most 100 characters."
          error={errors.at("name")}
          required
          autoFocus
          maxLength={100}
          value={name}
          onChange={setName}
        />
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
          <SelectField
            label="Test plan"
            required
            hint={names.plans.length === 0 ? "The project has no test plans yet." : undefined}
            value={planId}
            onChange={setPlanId}
          >
            {planId === "" && <option value="">Choose a test plan</option>}
            {names.plans.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </SelectField>
        ) : (
          <TextField
            label="Tags"
            required
            hint="Separated by commas: every enabled test case with any of them runs."
            autoCapitalize="off"
            value={tags}
            onChange={setTags}
          />
        )}
        <SelectField
          label="Environment"
          error={errors.at("environment_id")}
          required
          value={environmentId}
          onChange={setEnvironmentId}
        >
          {environmentId === "" && <option value="">Choose an environment</option>}
          {names.environments.map((env) => (
            <option key={env.id} value={env.id}>
              {env.name}
            </option>
          ))}
        </SelectField>
        <CodeField
          label="Cron expression"
          error={cronError || undefined}
          required
          hint={
            <>
              Five fields: minute, hour, day of month, month, day of week. E.g. <code>0 * * * *</code> every
              hour, <code>30 2 * * 1-5</code> at 02:30 on weekdays.
            </>
          }
          value={cron}
          onChange={setCron}
        />
        <TextField
          label="Time zone"
          error={zoneError || undefined}
          required
          hint="An IANA time zone, e.g. Europe/Berlin or UTC."
          list={zonesId}
          autoCapitalize="off"
          spellCheck={false}
          value={timeZone}
          onChange={setTimeZone}
        />
        <datalist id={zonesId}>
          {zones.map((zone) => (
            <option key={zone} value={zone} />
          ))}
        </datalist>
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
