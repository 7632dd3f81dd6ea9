// The Testrun web console: routes, data (TanStack Query over Connect) and the session.

import { Code } from "@connectrpc/connect";
import { TransportProvider } from "@connectrpc/connect-query";
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { createBrowserRouter, createRoutesFromElements, Route, RouterProvider } from "react-router";
import { errorOf, goToSignIn, isSignedOut, transport } from "./api";
import { NotFound } from "./components/States";
import { ApiKeys } from "./features/api-keys/ApiKeys";
import { Compare } from "./features/compare/Compare";
import { Credits } from "./features/credits/Credits";
import { Environments } from "./features/environments/Environments";
import { FailureGroupPage } from "./features/failures/FailureGroupPage";
import { FailureGroups } from "./features/failures/FailureGroups";
import { TestHealth } from "./features/health/TestHealth";
import { Members } from "./features/members/Members";
import { Home } from "./features/projects/Home";
import { OrgProjects } from "./features/projects/OrgProjects";
import { ProjectOverview } from "./features/projects/ProjectOverview";
import { Run } from "./features/runs/Run";
import { Runs } from "./features/runs/Runs";
import { TestResult } from "./features/runs/TestResult";
import { Schedules } from "./features/schedules/Schedules";
import { ScheduleView } from "./features/schedules/ScheduleView";
import { SignIn } from "./features/sign-in/SignIn";
import { SignInLink } from "./features/sign-in/SignInLink";
import { TestCaseEditor } from "./features/test-cases/TestCaseEditorPage";
import { TestCase } from "./features/test-cases/TestCasePage";
import { TestCases } from "./features/test-cases/TestCasesPage";
import { EditTestPlan } from "./features/test-plans/EditTestPlanPage";
import { NewTestPlan } from "./features/test-plans/NewTestPlanPage";
import { TestPlan } from "./features/test-plans/TestPlanPage";
import { TestPlans } from "./features/test-plans/TestPlansPage";
import { Variables } from "./features/variables/Variables";
import { Webhooks } from "./features/webhooks/Webhooks";
import { WebhookView } from "./features/webhooks/WebhookView";
import { Shell } from "./Shell";
import { SessionProvider } from "./session";
import "./styles.css";

// A session that ended (signed out elsewhere, expired, member removed) sends any page to sign-in.
const onError = (error: unknown) => {
  if (isSignedOut(error)) goToSignIn(error);
};
// Only failures that may pass retry (the console or a service behind it was briefly away); an answer
// such as NOT_FOUND or PERMISSION_DENIED shows at once.
const transient = new Set([
  Code.Unavailable,
  Code.DeadlineExceeded,
  Code.Unknown,
  Code.Internal,
  Code.Aborted,
]);
const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: {
    queries: {
      retry: (count, error) => transient.has(errorOf(error).code) && count < 2,
      refetchOnWindowFocus: true,
    },
  },
});

function SignedIn() {
  return (
    <SessionProvider>
      <Shell />
    </SessionProvider>
  );
}

// A data router: the test case editor holds a person back from leaving with unsaved changes
// (useBlocker), which only a data router can do.
const router = createBrowserRouter(
  createRoutesFromElements(
    <>
      <Route path="/sign-in" element={<SignIn />} />
      <Route path="/sign-in/link" element={<SignInLink />} />
      <Route element={<SignedIn />}>
        <Route index element={<Home />} />
        <Route path="/orgs/:orgId" element={<OrgProjects />} />
        <Route path="/orgs/:orgId/members" element={<Members />} />
        <Route path="/projects/:projectId" element={<ProjectOverview />} />
        <Route path="/projects/:projectId/runs" element={<Runs />} />
        {/* The url the REST API gives a run (Run.url) and each of its tests (TestResult.url). */}
        <Route path="/projects/:projectId/runs/:runId" element={<Run />} />
        <Route path="/projects/:projectId/runs/:runId/tests/:testResultId" element={<TestResult />} />
        {/* The url the CLI, the MCP tools and the REST API give a run's comparison (compareUrl). */}
        <Route path="/projects/:projectId/runs/:runId/compare" element={<Compare />} />
        <Route path="/projects/:projectId/test-plans" element={<TestPlans />} />
        <Route path="/projects/:projectId/test-plans/new" element={<NewTestPlan />} />
        <Route path="/projects/:projectId/test-plans/:testPlanId" element={<TestPlan />} />
        <Route path="/projects/:projectId/test-plans/:testPlanId/edit" element={<EditTestPlan />} />
        <Route path="/projects/:projectId/test-cases" element={<TestCases />} />
        <Route path="/projects/:projectId/test-cases/new" element={<TestCaseEditor />} />
        <Route path="/projects/:projectId/test-cases/:testCaseId" element={<TestCase />} />
        <Route path="/projects/:projectId/test-cases/:testCaseId/edit" element={<TestCaseEditor />} />
        <Route path="/projects/:projectId/test-health" element={<TestHealth />} />
        <Route path="/projects/:projectId/failures" element={<FailureGroups />} />
        <Route path="/projects/:projectId/failures/:groupId" element={<FailureGroupPage />} />
        <Route path="/projects/:projectId/environments" element={<Environments />} />
        <Route path="/projects/:projectId/variables" element={<Variables />} />
        <Route path="/projects/:projectId/schedules" element={<Schedules />} />
        <Route path="/projects/:projectId/schedules/:scheduleId" element={<ScheduleView />} />
        <Route path="/projects/:projectId/webhooks" element={<Webhooks />} />
        <Route path="/projects/:projectId/webhooks/:webhookId" element={<WebhookView />} />
        <Route path="/projects/:projectId/credits" element={<Credits />} />
        <Route path="/projects/:projectId/settings/api" element={<ApiKeys />} />
        <Route path="*" element={<NotFound />} />
      </Route>
    </>,
  ),
);

const root = document.getElementById("root");
if (root)
  createRoot(root).render(
    <StrictMode>
      <TransportProvider transport={transport}>
        <QueryClientProvider client={queryClient}>
          <RouterProvider router={router} />
        </QueryClientProvider>
      </TransportProvider>
    </StrictMode>,
  );
