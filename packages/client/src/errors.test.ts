import { describe, expect, it } from "vitest";
import { KeywardError, ok } from "./errors";

const errorBody = { reqId: "req-1", statusCode: 404, message: "Secret not found", error: "NotFound" };

describe("ok", () => {
  it("returns the body of a 2xx answer, given the call or its response", async () => {
    expect(await ok(Promise.resolve({ status: 200 as const, body: { id: "a" } }))).toEqual({ id: "a" });
    expect(await ok({ status: 201 as const, body: { id: "b" } })).toEqual({ id: "b" });
  });

  it("throws a KeywardError carrying the server's error body and message", async () => {
    const error = await ok(Promise.resolve({ status: 404, body: errorBody })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeywardError);
    expect(error).toMatchObject({ status: 404, body: errorBody, message: "Secret not found" });
  });

  it("joins a 422's validation issues into the message", async () => {
    const body = {
      ...errorBody,
      statusCode: 422,
      message: [{ code: "invalid_type", path: ["name"], message: "Required" }],
    };
    await expect(ok({ status: 422, body })).rejects.toThrow("name: Required");
  });

  it("names the status when the body is not the server's error body", async () => {
    const error = await ok({ status: 502, body: "<html>Bad gateway</html>" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 502, body: undefined, message: "Keyward answered HTTP 502" });
  });

  it("turns a call that got no answer into status 0, and rethrows any other failure as it is", async () => {
    const unreachable = await ok(Promise.reject(new TypeError("Failed to fetch"))).catch((e: unknown) => e);
    expect(unreachable).toBeInstanceOf(KeywardError);
    expect(unreachable).toMatchObject({
      status: 0,
      isUnreachable: true,
      message: "The server could not be reached: Failed to fetch",
    });
    const other = new Error("boom");
    await expect(ok(Promise.reject(other))).rejects.toBe(other);
  });
});
