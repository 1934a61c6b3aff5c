import { describe, expect, it } from "vitest";
import { ok } from "@keyward/client";
import { admin, createScope, keyward } from "./helpers";

/** A project whose dev root is protected; the scope's identity writes and may approve its own requests. */
const protectedScope = async () => {
  const scope = await createScope();
  await ok(
    admin().secretApprovalPolicies.create({
      body: {
        projectId: scope.project.id,
        environment: "dev",
        secretPath: "/",
        approvers: [{ type: "identity", id: scope.identity.id }],
        approvals: 1,
        enforcementLevel: "hard",
        allowedSelfApprovals: true,
        bypassForMachineIdentities: false,
      },
    }),
  );
  return scope;
};

const requestIdIn = (stderr: string) => /Change request ([0-9a-f-]{36}) is open/.exec(stderr)?.[1];

describe("keyward on a protected folder", () => {
  it("says a change request was opened and nothing written; approvals list, show, approve and merge apply it", async () => {
    const scope = await protectedScope();
    const set = await keyward(["secrets", "set", ...scope.scope, "API_KEY=k-123"], { env: scope.env });
    expect(set.code).toBe(3);
    expect(set.stdout).toBe("");
    expect(set.stderr).toContain("nothing was written yet");
    const requestId = requestIdIn(set.stderr)!;
    expect(requestId).toBeDefined();
    const missing = await keyward(["secrets", "get", "API_KEY", ...scope.scope, "--plain"], { env: scope.env });
    expect(missing.code).not.toBe(0);

    const waiting = await keyward(["approvals", "list", "--project-id", scope.project.id, "--waiting"], {
      env: scope.env,
    });
    expect(waiting.stdout).toContain(`${requestId}  open  dev:/  0/1 approvals`);
    const show = await keyward(["approvals", "show", requestId], { env: scope.env });
    expect(show.stdout).toContain("+ API_KEY = k-123");

    const approve = await keyward(["approvals", "approve", requestId, "--comment", "looks right"], { env: scope.env });
    expect(approve.code, approve.stderr).toBe(0);
    const merge = await keyward(["approvals", "merge", requestId], { env: scope.env });
    expect(merge.stdout).toBe(`merged ${requestId}\n`);
    const got = await keyward(["secrets", "get", "API_KEY", ...scope.scope, "--plain"], { env: scope.env });
    expect(got.stdout).toBe("k-123\n");
  });

  it("a rejected request cannot be merged, and the error says why", async () => {
    const scope = await protectedScope();
    const del = await keyward(["secrets", "set", ...scope.scope, "TEMP=1"], { env: scope.env });
    const requestId = requestIdIn(del.stderr)!;
    expect((await keyward(["approvals", "reject", requestId], { env: scope.env })).stdout).toBe(
      `rejected ${requestId}\n`,
    );
    const merge = await keyward(["approvals", "merge", requestId], { env: scope.env });
    expect(merge.code).not.toBe(0);
    expect(merge.stderr).toContain("You can only merge open approval requests");
  });
});
