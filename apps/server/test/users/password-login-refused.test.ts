import { beforeAll, describe, expect, it } from "vitest";
import { getTestApp } from "../helpers/app";

let baseUrl: string;
beforeAll(async () => {
  baseUrl = (await getTestApp()).baseUrl;
});

const post = (path: string, body: unknown) =>
  fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("password login of Infisical-compatible command lines", () => {
  it("is refused on every step with a 400 that says to sign in through the browser", async () => {
    const steps: [string, unknown][] = [
      ["/api/v3/auth/login", { email: "ada@example.test", password: "not-held-here" }],
      ["/api/v3/auth/login1", { email: "ada@example.test", clientPublicKey: "AAAA" }],
      ["/api/v3/auth/login2", { email: "ada@example.test", clientProof: "AAAA" }],
    ];
    for (const [path, body] of steps) {
      const answer = await post(path, body);
      expect(answer.status, path).toBe(400);
      const error = (await answer.json()) as Record<string, unknown>;
      expect(error).toMatchObject({ statusCode: 400, error: "BadRequest" });
      expect(error.message).toMatch(/sign in through the browser/);
      expect(typeof error.reqId).toBe("string");
    }
  });

  it("leaves other methods and neighbouring paths unknown", async () => {
    expect((await fetch(`${baseUrl}/api/v3/auth/login1`)).status).toBe(404);
    expect((await post("/api/v3/auth/login3", {})).status).toBe(404);
  });
});
