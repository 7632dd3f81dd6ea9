// The frame of every signed-in page: the top bar (organization and project switcher, who is signed
// in, sign-out) and the navigation of the organization or project being looked at.
import { createQueryOptions, useQuery, useTransport } from "@connectrpc/connect-query";
import { useQueries } from "@tanstack/react-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useEffect, useRef } from "react";
import { NavLink, Outlet, useLocation, useNavigate, useParams } from "react-router";
import { isNotFound } from "./api";
import { signOut, signOutEverywhere, useSession } from "./session";

/** The project's pages, in the navigation's order. */
const projectSections = [
  ["", "Overview"],
  ["/runs", "Runs"],
  ["/test-plans", "Test plans"],
  ["/test-cases", "Test cases"],
  ["/test-health", "Test health"],
  ["/failures", "Failures"],
  ["/environments", "Environments"],
  ["/variables", "Variables"],
  ["/schedules", "Schedules"],
  ["/webhooks", "Webhooks"],
  ["/credits", "Credits"],
  ["/settings/api", "Settings: API & CI"],
] as const;

export function Shell() {
  const session = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  const sidenav = useRef<HTMLElement>(null);
  // On a phone the sections are one row that scrolls sideways: keep the current one in view.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs again on each navigation
  useEffect(() => {
    sidenav.current?.querySelector("a.active")?.scrollIntoView({ block: "nearest", inline: "nearest" });
  }, [location.pathname]);
  const { projectId, orgId } = useParams();
  const project = useQuery(
    ConsoleService.method.getProject,
    { projectId: projectId ?? "" },
    { enabled: !!projectId },
  );
  const organizationId = orgId ?? project.data?.organization?.id;
  const organizationName = session.memberships.find((m) => m.organization?.id === organizationId)
    ?.organization?.name;
  const transport = useTransport();
  // Every organization's projects, for the switcher (organizations are few).
  const projectLists = useQueries({
    queries: session.memberships.map((m) =>
      createQueryOptions(
        ConsoleService.method.listProjects,
        { organizationId: m.organization?.id ?? "" },
        { transport },
      ),
    ),
  });

  const current = projectId ? `prj:${projectId}` : organizationId ? `org:${organizationId}` : "";
  // Until the lists are in (or for a project the person cannot see), the switcher shows no choice.
  const listed =
    session.memberships.some((m) => current === `org:${m.organization?.id}`) ||
    projectLists.some((list) => list.data?.projects.some((p) => current === `prj:${p.id}`));

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <NavLink to="/" className="brand" aria-label="Testrun home">
          <img src="/favicon.svg" alt="" width="24" height="24" />
          <span className="brand-name">Testrun</span>
        </NavLink>
        <label className="switcher">
          <span className="visually-hidden">Organization and project</span>
          <select
            value={listed ? current : ""}
            onChange={(event) => {
              const [kind, id] = event.target.value.split(":");
              navigate(kind === "prj" ? `/projects/${id}` : `/orgs/${id}`);
            }}
          >
            {!listed && (
              <option value="" disabled>
                Choose a project
              </option>
            )}
            {session.memberships.map((m, i) => (
              <optgroup key={m.organization?.id} label={m.organization?.name}>
                <option value={`org:${m.organization?.id}`}>{m.organization?.name}: all projects</option>
                {projectLists[i]?.data?.projects.map((p) => (
                  <option key={p.id} value={`prj:${p.id}`}>
                    {p.name}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </label>
        <details className="account">
          <summary className="account-summary" aria-label={`Account: ${session.email}`}>
            {/* Narrow screens show the initial alone; the menu says the whole address. */}
            <span className="account-initial" aria-hidden="true">
              {session.email.charAt(0).toUpperCase()}
            </span>
            <span className="account-email" title={session.email}>
              {session.email}
            </span>
          </summary>
          <div className="account-menu">
            <p className="account-who">
              Signed in as <strong>{session.email}</strong>
            </p>
            <button type="button" className="button button-quiet" onClick={() => void signOut()}>
              Sign out
            </button>
            <button type="button" className="button button-quiet" onClick={() => void signOutEverywhere()}>
              Sign out everywhere
            </button>
          </div>
        </details>
      </header>
      <div className="frame">
        <nav className="sidenav" aria-label="Sections" ref={sidenav}>
          {/* No sections of a project the person cannot see: its pages are "not found". */}
          {projectId && !isNotFound(project.error) && (
            <div className="sidenav-group">
              <p className="sidenav-heading">{project.data?.project?.name ?? "Project"}</p>
              {projectSections.map(([rest, label]) => (
                <NavLink key={rest} end={rest === ""} to={`/projects/${projectId}${rest}`}>
                  {label}
                </NavLink>
              ))}
            </div>
          )}
          {organizationId && (
            <div className="sidenav-group">
              <p className="sidenav-heading">{organizationName ?? "Organization"}</p>
              <NavLink end to={`/orgs/${organizationId}`}>
                Projects
              </NavLink>
              <NavLink to={`/orgs/${organizationId}/members`}>Members</NavLink>
            </div>
          )}
        </nav>
        <main id="main" className="content" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </div>
  );
}
