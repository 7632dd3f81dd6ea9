// The Slack-kind payload (services/automation/src/payload.ts) against Slack's documented
// incoming-webhook shape (docs/automation.md, "Slack"): `text` (the notification's fallback) and
// `blocks`, at most 50; section blocks whose `text` is mrkdwn of at most 3000 characters, or
// whose `fields` are at most 10 mrkdwn texts of at most 2000 characters each.
import { create } from "@bufbuild/protobuf";
import { RunSchema, RunStatus, TestResultSchema, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { expect } from "chai";
import { slackBody, slackMaxFailedTests } from "../src/payload.js";

interface Text {
  type: string;
  text: string;
}
interface Block {
  type: string;
  text?: Text;
  fields?: Text[];
}

/** Every rule of Slack's shape this payload touches; answers the blocks. */
function expectSlackShape(body: string): Block[] {
  const message = JSON.parse(body) as { text: unknown; blocks: Block[] };
  expect(Object.keys(message).sort()).to.deep.equal(["blocks", "text"]);
  expect(message.text).to.be.a("string").and.not.equal("");
  expect(message.blocks).to.be.an("array").with.length.within(1, 50);
  for (const block of message.blocks) {
    expect(block.type).to.equal("section");
    expect(block.text ?? block.fields, "a section has text or fields").to.not.equal(undefined);
    if (block.text) {
      expect(block.text.type).to.equal("mrkdwn");
      expect(block.text.text.length).to.be.within(1, 3000);
    }
    if (block.fields) {
      expect(block.fields.length).to.be.within(1, 10);
      for (const field of block.fields) {
        expect(field.type).to.equal("mrkdwn");
        expect(field.text.length).to.be.within(1, 2000);
      }
    }
  }
  return message.blocks;
}

const url = "https://app.testrun.example/projects/prj_1/runs/run_1";

function failedRun(failedCount: number, name: (i: number) => string, summary: (i: number) => string) {
  return create(RunSchema, {
    id: "run_1",
    projectId: "prj_1",
    name: "nightly <prod> & more",
    status: RunStatus.FAILED,
    finished: true,
    totalTests: failedCount + 2,
    passedTests: 2,
    failedTests: failedCount,
    url,
    environmentId: "env_1",
    tests: [
      create(TestResultSchema, { name: "home", status: TestStatus.PASSED }),
      ...Array.from({ length: failedCount }, (_, i) =>
        create(TestResultSchema, { name: name(i), status: TestStatus.FAILED, summary: summary(i) }),
      ),
      create(TestResultSchema, { name: "about", status: TestStatus.PASSED }),
    ],
  });
}

describe("Slack payload", () => {
  it("fits Slack's shape with 60 failed tests of the longest summaries, listing what fits and counting the rest", () => {
    // Names with mrkdwn's control characters; summaries at the runs service's 300-character bound.
    const run = failedRun(
      60,
      (i) => `checkout <step ${i}> & pay ${"x".repeat(150)}`,
      (i) => `expected 200, got 500 (${i}) ${"&".repeat(50)}${"y".repeat(220)}`.slice(0, 300),
    );
    const blocks = expectSlackShape(
      slackBody(
        { type: "run.failed", timestamp: new Date(), run },
        { plan: "Smoke & <b>", environment: "prod" },
      ),
    );
    const all = blocks
      .map((b) => [b.text?.text ?? "", ...(b.fields ?? []).map((f) => f.text)].join("\n"))
      .join("\n");
    const failedSection = blocks.find((b) => b.text?.text.startsWith("*Failed tests*"))?.text?.text ?? "";
    const listed = failedSection.split("\n").filter((line) => line.startsWith("• "));
    // Some listed, at most ten, each whole; the rest counted so the numbers add up to 60.
    expect(listed.length).to.be.within(1, slackMaxFailedTests);
    for (const line of listed)
      expect(line).to.match(
        /^• \*checkout &lt;step \d+&gt; &amp; pay x+\*: expected 200, got 500 \(\d+\) (&amp;)+y+$/,
      );
    expect(failedSection.split("\n").at(-1)).to.equal(`and ${60 - listed.length} more`);
    // Status, plan and environment, the run's url; user text escaped, never raw < > &.
    expect(all)
      .to.include(":x:")
      .and.include("failed")
      .and.include("Smoke &amp; &lt;b&gt;")
      .and.include("prod");
    expect(all).to.include(`<${url}|`);
    expect(all.replaceAll(`<${url}|`, "").replaceAll(">*", "").replaceAll("run>", "")).not.to.match(
      /<|&(?!amp;|lt;|gt;)/,
    );
    expect(
      JSON.parse(slackBody({ type: "run.failed", timestamp: new Date(), run }, { environment: "prod" })).text,
    )
      .to.include("60 failed of 62")
      .and.include(url);
  });

  it("lists ten short failures and counts the rest", () => {
    const run = failedRun(
      25,
      (i) => `test ${i}`,
      () => "expected 200, got 500",
    );
    const blocks = expectSlackShape(
      slackBody({ type: "run.failed", timestamp: new Date(), run }, { environment: "prod" }),
    );
    const failedSection = blocks.find((b) => b.text?.text.startsWith("*Failed tests*"))?.text?.text ?? "";
    expect(failedSection.split("\n")).to.deep.equal([
      "*Failed tests*",
      ...Array.from({ length: 10 }, (_, i) => `• *test ${i}*: expected 200, got 500`),
      "and 15 more",
    ]);
  });

  it("says why a schedule's tick could not start, in the same shape", () => {
    const blocks = expectSlackShape(
      slackBody(
        {
          type: "schedule.tick_failed",
          timestamp: new Date(),
          tick: {
            scheduleId: "sch_1",
            scheduleName: "hourly <smoke>",
            dueAt: new Date(),
            failure: "not enough credits",
          },
        },
        { environment: "" },
      ),
    );
    expect(blocks[0]?.text?.text).to.include("hourly &lt;smoke&gt;").and.include("not enough credits");
  });
});
