// `testrun --help`. docs/pipelines.md says the same at length; the exit codes must agree (a test checks).

export const usage = `testrun: start Testrun runs from a pipeline, wait for them and report

Usage:
  testrun run (--plan NAME|ID | --tags a,b | --cases ID,ID) [--env ENV] [--name NAME]
              [--retries N] [wait options]
  testrun rerun RUN_ID [--failed] [wait options]   a new run of the same tests (only the failed ones)
  testrun wait RUN_ID [wait options]               follow a run started elsewhere
  testrun status RUN_ID [--json FILE|-]            print a run once
  testrun cancel RUN_ID                            stop a run; tests not run yet are refunded
  testrun list plans|envs|cases|runs [--json FILE|-] [--tag T]... [--search S] [--limit N]
  testrun mcp                                      serve the Testrun tools to an AI agent over stdio (MCP)
  testrun push FOLDER [--tags a,b] [--dry-run] [--json FILE|-]
                         make each Playwright spec under FOLDER (*.spec.ts, *.test.js...) one
                         test case, with the helper files it imports and the tags given; prints
                         what was created, updated or left unchanged (needs TESTRUN_CONTENT_TOKEN)

Run options:
  --retries N            run a failed test again up to N times (0 to 3), in place of the plan's
                         and the test cases' own retries; a test that passes on retry is flaky

Wait options (run, rerun, wait):
  --no-wait              start the run, print its id and url, exit 0 (run, rerun)
  --timeout DURATION     stop waiting after 90s, 30m, 1h...; default 60m
  --cancel-on-timeout    cancel the run when the wait times out (else it goes on)
  --detach               on SIGINT/SIGTERM stop waiting but leave the run going (default: cancel it)
  --allow-skipped        exit 0, not 2, when the run was skipped
  --fail-on-flaky        exit 1, not 0, when a test passed only on retry (flaky); without it
                         such a run passes with a warning
  --fail-on new-failures exit 1 only when a test failed that did not fail in the base run (the
                         previous run of the same plan on the environment); known failures
                         warn and exit 0. The run ends with a line comparing it with that run
  --junit FILE           write a JUnit XML report (one testcase per test)
  --json FILE            write the run as the API returns it ("-" for stdout)
  --artifacts DIR        download the tests' screenshots, traces and browser logs into DIR
                         (at most 256 MiB a file, 1 GiB in all); the JUnit report attaches them

Environment:
  TESTRUN_URL            the Testrun API's address, e.g. https://testrun.example.com
  TESTRUN_API_KEY        a project API key (keep it in your CI's secret store)
  TESTRUN_CONTENT_TOKEN  push only: a content token (trc_…) an Editor created in API & CI
  GITHUB_STEP_SUMMARY    when set, a Markdown summary of the run is appended to that file

Exit codes:
  0  the run passed (or any other command succeeded); failures of quarantined tests do not
     fail a run: it passes and they are named
  1  the run finished and a test failed (or passed only on retry, with --fail-on-flaky;
     with --fail-on new-failures, only a failure new against the base run)
  2  the run was skipped (unless --allow-skipped)
  3  the wait timed out before the run finished
  4  the run could not be started or followed (401, 403, 402, 404, 409, network...)
  5  usage error (bad arguments, TESTRUN_URL or TESTRUN_API_KEY missing; for push, no spec
     in the folder, a file past its bounds, TESTRUN_CONTENT_TOKEN missing)
  130/143  interrupted by SIGINT/SIGTERM (the run was cancelled unless --detach)

While waiting it prints the run's url, then one line per change (a live line on a terminal).
It long-polls the API (falling back to reading every 15 s), waits out 429s as Retry-After says,
retries reads through network errors and 5xx, and never starts a run twice.

testrun mcp is for AI agents whose MCP client launches local servers: it speaks MCP on stdin and
stdout until the client closes stdin, with the tools of the gateway's /v1/mcp endpoint; each tool
call is one request of the API. Configuring clients: docs/agents.md
More: docs/pipelines.md
`;
