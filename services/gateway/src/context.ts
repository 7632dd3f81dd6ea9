import type { ApiKeyActor } from "@testrun/gen/testrun/common/v1/actor_pb";
import type { Logger } from "@testrun/kit";
import type Koa from "koa";

/** A verified content token: the only thing it may do is import content into its project, as its creator. */
export interface ContentToken {
  tokenId: string;
  projectId: string;
  creatorMemberId: string;
}

/** What the gateway's middleware keeps about a request. */
export interface GatewayState {
  requestId: string;
  /** The request's logger: every line carries requestId. */
  log: Logger;
  /** The verified key, once authentication passed. */
  key?: ApiKeyActor;
  /** The verified content token, on the content import only (auth.ts, requireContentToken). */
  contentToken?: ContentToken;
  /** The REST API's public origin for this request (API_URL, else where the request came to). */
  origin: string;
}

export type GatewayContext = Koa.ParameterizedContext<GatewayState>;

/** Options of every gRPC call made for a request: the request id travels along for correlation. */
export const callOptions = (ctx: GatewayContext) => ({ headers: { "x-request-id": ctx.state.requestId } });
