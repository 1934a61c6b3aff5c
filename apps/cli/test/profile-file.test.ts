import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createScope, keyward, url } from "./helpers";

let scope: Awaited<ReturnType<typeof createScope>>;
beforeAll(async () => {
  scope = await createScope();
});

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** XDG_CONFIG_HOME for one test, and the CLI's own folder in it (created here when `folderMode` is given). */
const configHome = (folderMode?: number) => {
  const home = mkdtempSync(join(tmpdir(), "keyward-cli-profile-"));
  chmodSync(home, 0o755);
  const folder = join(home, "keyward");
  if (folderMode !== undefined) {
    mkdirSync(folder);
    chmodSync(folder, folderMode);
  }
  return { home, folder, profile: join(folder, "profile.json") };
};

const login = (home: string) =>
  keyward(["login", "--method", "token", "--url", url(), "--token", scope.token], { configDir: home });

describe("keyward login: the stored profile file", () => {
  it("refuses to write the profile through a symlink, leaving the file it points to as it was", async () => {
    const { home, profile } = configHome(0o700);
    const elsewhere = join(mkdtempSync(join(tmpdir(), "keyward-cli-elsewhere-")), "notes.txt");
    writeFileSync(elsewhere, "not a profile\n");
    chmodSync(elsewhere, 0o644);
    symlinkSync(elsewhere, profile);

    const result = await login(home);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/profile\.json is a symbolic link/);
    expect(readFileSync(elsewhere, "utf8")).toBe("not a profile\n");
    expect(modeOf(elsewhere)).toBe(0o644);
    expect(lstatSync(profile).isSymbolicLink()).toBe(true);
    expect(result.stdout + result.stderr).not.toContain(scope.token);
  });

  it("writes the profile as a new 0600 file and closes its own folder to 0700", async () => {
    const { home, folder, profile } = configHome(0o755);
    writeFileSync(profile, '{"url":"http://old.example","token":"old"}\n', { mode: 0o600 });
    // A second name for the old file: writing in place would change what it reads too.
    const oldName = join(home, "old-profile.json");
    linkSync(profile, oldName);

    const result = await login(home);
    expect(result.code).toBe(0);
    expect(modeOf(folder)).toBe(0o700);
    expect(modeOf(home)).toBe(0o755);
    expect(modeOf(profile)).toBe(0o600);
    expect(JSON.parse(readFileSync(profile, "utf8"))).toMatchObject({ url: url(), token: scope.token });
    expect(readFileSync(oldName, "utf8")).toContain('"token":"old"');
    expect(readdirSync(folder)).toEqual(["profile.json"]);
  });

  it("creates its folder 0700 when there is none", async () => {
    const { home, folder, profile } = configHome();
    const result = await login(home);
    expect(result.code).toBe(0);
    expect(modeOf(folder)).toBe(0o700);
    expect(modeOf(profile)).toBe(0o600);
  });
});
