import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { SpecFolderError, specFolderFiles } from "../src/spec-folder.js";

describe("content-file: reading a spec folder from disk", () => {
  let folder: string;
  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), "spec-folder-"));
  });
  afterEach(() => rm(folder, { recursive: true, force: true }));

  const put = async (path: string, source: string) => {
    await mkdir(join(folder, path, ".."), { recursive: true });
    await writeFile(join(folder, path), source);
  };

  it("reads specs and helpers in path order, leaving out dependencies, hidden folders and config", async () => {
    await put("tests/login.spec.ts", "test");
    await put("pages/login.ts", "export {}");
    await put("data.json", "{}");
    await put("node_modules/x/index.spec.ts", "no");
    await put(".cache/a.spec.ts", "no");
    await put("playwright-report/b.spec.ts", "no");
    await put("playwright.config.ts", "no");
    await put("package.json", "{}");
    await put("tsconfig.base.json", "{}");
    await put("README.md", "no");
    await mkdir(join(folder, "widgets.ts"));

    const files = await specFolderFiles(folder);
    expect(files).to.deep.equal([
      { path: "data.json", source: "{}" },
      { path: "pages/login.ts", source: "export {}" },
      { path: "tests/login.spec.ts", source: "test" },
    ]);
  });

  it("follows no symbolic link: a file or folder outside is not read, a link to .. no loop", async () => {
    const outside = await mkdtemp(join(tmpdir(), "spec-folder-outside-"));
    try {
      await writeFile(join(outside, "creds.json"), '{"password": "outside"}');
      await put("tests/login.spec.ts", 'import "./creds.json";');
      await symlink(join(outside, "creds.json"), join(folder, "tests", "creds.json"));
      await symlink(outside, join(folder, "tests", "linked"));
      await symlink("..", join(folder, "tests", "up"));
      const files = await specFolderFiles(folder);
      expect(files).to.deep.equal([{ path: "tests/login.spec.ts", source: 'import "./creds.json";' }]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("stops with a too-large error once the sources pass maxBytes", async () => {
    await put("a.spec.ts", "x".repeat(60));
    await put("b.spec.ts", "x".repeat(60));
    const error = await specFolderFiles(folder, { maxBytes: 100 }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SpecFolderError);
    expect((error as SpecFolderError).reason).to.equal("too-large");
    expect(await specFolderFiles(folder, { maxBytes: 120 })).to.have.length(2);
  });

  it("says a missing folder or a file is unreadable", async () => {
    await put("a.spec.ts", "test");
    for (const path of [join(folder, "absent"), join(folder, "a.spec.ts")]) {
      const error = await specFolderFiles(path).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(SpecFolderError);
      expect((error as SpecFolderError).reason).to.equal("unreadable");
    }
  });
});
