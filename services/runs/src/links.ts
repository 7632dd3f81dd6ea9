/** Builds the web application's links (docs/rest-api.md: `{APP_URL}/projects/{projectId}/runs/{runId}`). */
export class Links {
  private readonly base: string;
  constructor(appUrl: string) {
    this.base = appUrl.replace(/\/+$/, "");
  }
  run(projectId: string, runId: string): string {
    return `${this.base}/projects/${encodeURIComponent(projectId)}/runs/${encodeURIComponent(runId)}`;
  }
  test(projectId: string, runId: string, testResultId: string): string {
    return `${this.run(projectId, runId)}/tests/${encodeURIComponent(testResultId)}`;
  }
}
