import { once } from "node:events";
import type { EgressGuard } from "@testrun/kit/egress";

export interface DestinationRules {
  guard: EgressGuard;
  /** WEBHOOK_ALLOW_HTTP: plain http allowed (local receivers only). */
  allowHttp: boolean;
  /** SLACK_WEBHOOK_HOSTS. */
  slackHosts: readonly string[];
  /** WEBHOOK_TIMEOUT_MS: how long a host name may take to resolve when a webhook is saved. */
  timeoutMs: number;
}

const notResolvedYet = "names a host that could not be resolved just now: try again in a moment";

/**
 * Why a webhook URL is refused, or undefined: https only (http with WEBHOOK_ALLOW_HTTP), no user
 * name or password, and a host whose every address the egress rules allow (docs/automation.md,
 * "Egress"). Checked at creation and again before every attempt, against the address resolved
 * then; the attempt connects only to the addresses checked (the guard's lookup). The lookup ends
 * with `signal` (an attempt's own deadline; WEBHOOK_TIMEOUT_MS by default): a resolver that does
 * not answer must not hold a save or a delivery slot for as long as the system resolver retries.
 */
export async function destinationProblem(
  rules: DestinationRules,
  text: string,
  kind: "standard" | "slack",
  signal: AbortSignal = AbortSignal.timeout(rules.timeoutMs),
): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "is not a URL";
  }
  if (text.length > 2048) return "must be at most 2048 characters";
  if (url.protocol !== "https:" && !(rules.allowHttp && url.protocol === "http:"))
    return "must be an https URL";
  if (url.username || url.password) return "must not carry a user name or password";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (kind === "slack" && !rules.slackHosts.includes(host.toLowerCase()))
    return `a Slack webhook posts to Slack's incoming-webhook URL (https://${rules.slackHosts[0] ?? "hooks.slack.com"}/…)`;
  // A name that does not resolve is refused at creation (a webhook that could never be delivered
  // is a mistake to say now, at its field); a resolver that fails for a while says so apart.
  const resolved = new Promise<string | undefined>((resolve) =>
    rules.guard.lookup(host, { all: true }, (error) => {
      const code = (error as { code?: string } | null)?.code;
      resolve(
        !error
          ? undefined
          : code === "EGRESS_REFUSED"
            ? "goes to an address webhooks may not reach (loopback, link-local or metadata, a special-purpose range, or the cluster)"
            : code === "EAI_AGAIN"
              ? notResolvedYet
              : "names a host that does not resolve: check the host name",
      );
    }),
  );
  if (signal.aborted) return notResolvedYet;
  return Promise.race([resolved, once(signal, "abort").then(() => notResolvedYet)]);
}
