import { useMutation } from "@connectrpc/connect-query";
import {
  NotifyMode,
  type Webhook,
  type WebhookEvent,
  WebhookKind,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useRef, useState } from "react";
import { formErrors } from "../../api";
import { webhookEvents } from "../../automation-format";
import { Dialog, DialogActions, ErrorNotice } from "../../components/Dialog";
import { FieldSet, useFocusOnError } from "../../components/Field";
import { CodeField } from "../../components/Inputs";
import { useInvalidate } from "../../components/useInvalidate";

/** New webhook: its kind, URL, events and when it notifies; the signing secret shows next. */
export function CreateWebhookDialog({
  projectId,
  onClose,
  onCreated,
}: {
  projectId: string;
  onClose: () => void;
  onCreated: (webhook: Webhook, secret: string) => void;
}) {
  const invalidate = useInvalidate();
  const save = useMutation(ConsoleService.method.createWebhook);
  const [url, setUrl] = useState("");
  const [kind, setKind] = useState(WebhookKind.STANDARD);
  const [events, setEvents] = useState<WebhookEvent[]>([webhookEvents[0].event]);
  const [notifyMode, setNotifyMode] = useState(NotifyMode.FAILURES_AND_RECOVERIES);
  const form = useRef<HTMLFormElement>(null);
  useFocusOnError(form, save.error);
  const errors = formErrors(save, { url, events, kind, notify_mode: notifyMode });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(
      { projectId, url, kind, events, notifyMode },
      {
        onSuccess: async (answer) => {
          await invalidate(ConsoleService.method.listWebhooks);
          if (answer.webhook) onCreated(answer.webhook, answer.secret);
          else onClose();
        },
      },
    );
  };
  const toggle = (event: WebhookEvent, on: boolean) =>
    setEvents((now) => (on ? [...now, event] : now.filter((e) => e !== event)));
  return (
    <Dialog title="New webhook" open onClose={onClose}>
      <form ref={form} className="stack" onSubmit={submit} noValidate>
        <FieldSet legend="Kind" error={errors.at("kind")}>
          <div className="choices">
            <label className="choice">
              <input
                type="radio"
                name="webhook-kind"
                checked={kind === WebhookKind.STANDARD}
                onChange={() => setKind(WebhookKind.STANDARD)}
              />
              Standard (signed JSON)
            </label>
            <label className="choice">
              <input
                type="radio"
                name="webhook-kind"
                checked={kind === WebhookKind.SLACK}
                onChange={() => setKind(WebhookKind.SLACK)}
              />
              Slack
            </label>
          </div>
        </FieldSet>
        <CodeField
          label="URL"
          error={errors.at("url")}
          required
          hint={
            kind === WebhookKind.SLACK ? (
              <>
                A Slack incoming webhook, <code>https://hooks.slack.com/…</code>.
              </>
            ) : (
              <>
                An <code>https://</code> address on the internet; private, loopback and cluster addresses are
                refused.
              </>
            )
          }
          inputMode="url"
          autoFocus
          value={url}
          onChange={setUrl}
        />
        <FieldSet legend="Events" error={errors.at("events")}>
          <div className="choices">
            {webhookEvents.map((e) => (
              <label key={e.event} className="choice">
                <input
                  type="checkbox"
                  checked={events.includes(e.event)}
                  onChange={(change) => toggle(e.event, change.target.checked)}
                />
                {e.name} <code className="small muted">{e.type}</code>
              </label>
            ))}
          </div>
        </FieldSet>
        <FieldSet legend="Notify on" error={errors.at("notify_mode")}>
          <div className="choices">
            <label className="choice">
              <input
                type="radio"
                name="notify-mode"
                checked={notifyMode === NotifyMode.FAILURES_AND_RECOVERIES}
                onChange={() => setNotifyMode(NotifyMode.FAILURES_AND_RECOVERIES)}
              />
              Failures and recoveries <span className="muted">(default)</span>
            </label>
            <label className="choice">
              <input
                type="radio"
                name="notify-mode"
                checked={notifyMode === NotifyMode.EVERY_RUN}
                onChange={() => setNotifyMode(NotifyMode.EVERY_RUN)}
              />
              Every run
            </label>
          </div>
        </FieldSet>
        {errors.other && <ErrorNotice error={save.error} />}
        <DialogActions
          onCancel={onClose}
          label="Create webhook"
          busyLabel="Creating…"
          busy={save.isPending}
        />
      </form>
    </Dialog>
  );
}
