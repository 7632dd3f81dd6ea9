/**
 * What the gateway serves at GET /llms.txt (llmstxt.org): how an AI agent uses the API, in a few
 * lines. docs/agents.md carries the same text (services/gateway/test/http.test.ts checks).
 */
export const llmsTxt = `# Testrun API

> Starts test runs against a project's environments and reports their results, over JSON REST.
> Authenticate every request with a project API key: \`Authorization: Bearer trk_…\` (or \`X-Api-Key\`).
> The whole contract is the OpenAPI 3.1 document at /v1/openapi.json (no key needed).

To test something and get a verdict:
1. \`GET /v1/project\`: the environments and test plans (\`GET /v1/test-cases?tag=…&search=…\` lists test cases).
2. \`POST /v1/runs\` with \`{"testPlan": "<name or id>"}\` (or \`"tags": [...]\`, or \`"testCaseIds": [...]\`;
   optional \`"environment"\`) and a new \`Idempotency-Key: <uuid>\` header. 201 gives the run's \`id\` and \`url\`.
   Each test costs one credit.
3. \`GET /v1/runs/{id}?wait=30\` until \`finished\` is true. \`status\` is PASSED, FAILED or SKIPPED; each
   entry of \`tests\` has a one-line \`summary\` saying what failed. Give people the run's \`url\`.
   A test with \`flaky: true\` passed only on retry: say so; its \`attempts\` say why the others failed, and a
   FAILED test's \`cause\` (\`browser\`, \`executor_lost\`, \`no_executor\`: the system's fault, not the application's).
4. To retry failures: \`POST /v1/runs/{id}/rerun\` with \`{"failedOnly": true}\`. To stop a run:
   \`POST /v1/runs/{id}/cancel\`.
5. When a run FAILED: \`GET /v1/runs/{id}/comparison\` says which failures are new against the previous
   run (\`newly_failing\`, first) and which were already failing (\`still_failing\`, since which run);
   a failed test's \`failureGroup\` (\`GET /v1/failure-groups/{id}\`) shows other tests failing the same way.
6. A test's \`health.state\` says whether its case is a \`new_failure\`, \`failing\` (since \`failingSince.runId\`),
   \`flaky\` (\`failureRate\`: count of sample) or \`stable\`. \`quarantined: true\` marks a failure that does not
   fail the run (counted in \`quarantinedFailures\`; why: \`health.quarantine.reason\`): report it as known.
   \`GET /v1/test-cases/{id}/history\` lists a case's results and its health.

Rules:
- Errors are \`{"error": "<message>", "code": "<code>"}\`: branch on the status and code. 409
  ambiguous_name lists \`candidates\`: retry with one of those ids. 402 insufficient_credits: stop and
  report \`required\` and \`available\` to a person (only an operator of this Testrun grants
  credits). 401/403: the key does not work; ask a person for another.
- 429: wait \`Retry-After\` seconds. A key may make 60 requests a minute and hold 10 waits at once (a project's keys 50 together).
- A POST that got no answer may be retried with the same Idempotency-Key: it answers with the same
  run (header \`Idempotency-Replayed: true\`) instead of starting another. A 500 that carries an \`id\`
  means the run started: follow it, do not post again.
- Never put the key in a prompt, a log, a commit or an answer to a person.

An MCP client can use the same operations as tools: \`POST /v1/mcp\` (Streamable HTTP) with the same
key and the same limits (each tool call counts as one request); \`testrun mcp\` serves them over stdio.

## Docs
- [OpenAPI document](/v1/openapi.json): every endpoint, field, error code and header, with examples
`;
