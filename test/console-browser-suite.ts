// What a console browser suite sets up, once per describe: the whole system (the test process's
// shared one unless it asks for its own), one browser, a project with its organization, and pages
// in contexts of their own (no cookie shared between them), closed after each test.
import { addMember, createCliContext } from "@testrun/cli";
import type { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { System } from "../scripts/system.js";
import { launchBrowser, openSignInLink, viewports } from "./browser.js";
import { consoleClient, signIn } from "./console-client.js";
import { newProject, sharedTestSystem, startTestSystem, type TestProject } from "./pipeline.js";

export type Width = keyof typeof viewports;

export interface ConsoleBrowserSuite {
  readonly system: System;
  readonly browser: Browser;
  readonly project: TestProject;
  readonly organizationId: string;
  /** Secrets the browser handled (the sign-in links' tokens; tests add their own): none may reach a log line. */
  readonly secrets: string[];
  /** A page of a fresh context at that width, signed in as nobody. */
  newPage(width: Width): Promise<Page>;
  /** A page signed in as the member with a fresh sign-in link. */
  signedIn(width: Width, memberId: string): Promise<Page>;
  /** Adds a member to the project's organization, as testrunctl does. */
  member(email: string, role: Role): ReturnType<typeof addMember>;
}

/** Registers the suite's hooks in the calling describe; its fields are set once `before` has run. */
export function consoleBrowserSuite(
  projectName: string,
  options: {
    credits: number;
    /** A system of the suite's own, for a suite that stops one of its services; else the shared one. */
    ownSystem?: boolean;
  },
): ConsoleBrowserSuite {
  const contexts: BrowserContext[] = [];
  const suite = {
    secrets: [] as string[],
    newPage: async (width: Width) => {
      const context = await suite.browser.newContext({ viewport: viewports[width] });
      contexts.push(context);
      return context.newPage();
    },
    signedIn: async (width: Width, memberId: string) => {
      const page = await suite.newPage(width);
      suite.secrets.push(await openSignInLink(page, suite.system, memberId));
      return page;
    },
    member: (email: string, role: Role) =>
      addMember(createCliContext(suite.system.env), {
        organizationId: suite.organizationId,
        email,
        displayName: email.split("@")[0] ?? "",
        role,
      }),
  } as ConsoleBrowserSuite & {
    system: System;
    browser: Browser;
    project: TestProject;
    organizationId: string;
  };

  before(async () => {
    suite.system = options.ownSystem ? await startTestSystem() : await sharedTestSystem();
    suite.browser = await launchBrowser();
    suite.project = await newProject(suite.system, projectName, options);
    const owner = consoleClient(suite.system, await signIn(suite.system, suite.project.ownerId));
    suite.organizationId =
      (await owner.getProject({ projectId: suite.project.projectId })).organization?.id ?? "";
  });
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });
  after(async () => {
    await suite.browser?.close();
    if (options.ownSystem) await suite.system?.stop();
  });
  return suite;
}
