import { describe, expect, it } from "vitest";
import { MAX_REGISTRATIONS, placeMatches, placesOf, planRegistrations } from "./stream";

describe("planRegistrations", () => {
  it("registers the four secret events for each folder while they fit in one stream", () => {
    const [group, ...rest] = planRegistrations([
      { environment: "dev", path: "/app" },
      { environment: "dev", path: "/app" },
      { environment: "prod", path: "/", recursive: true },
    ]);
    expect(rest).toEqual([]);
    expect(group).toHaveLength(8);
    expect(group!.map((r) => r.conditions.secretPath)).toEqual([...Array(4).fill("/app"), ...Array(4).fill("/**")]);
    expect(new Set(group!.map((r) => r.event)).size).toBe(4);
  });

  it("follows whole environments past two folders, and never puts more than ten on a stream", () => {
    const groups = planRegistrations(
      ["a", "b", "c"].flatMap((env) => [
        { environment: env, path: "/x" },
        { environment: env, path: "/y" },
      ]),
    );
    expect(groups.flat()).toHaveLength(12);
    expect(groups.every((g) => g.length <= MAX_REGISTRATIONS)).toBe(true);
    expect(new Set(groups.flat().map((r) => r.conditions.secretPath))).toEqual(new Set(["/**"]));
  });
});

describe("placeMatches", () => {
  it("matches the same folder, and folders below only when recursive", () => {
    const place = { environment: "dev", secretPath: "/app/db/" };
    expect(placeMatches(place, "dev", "/app/db")).toBe(true);
    expect(placeMatches(place, "prod", "/app/db")).toBe(false);
    expect(placeMatches(place, "dev", "/app")).toBe(false);
    expect(placeMatches(place, "dev", "/app", true)).toBe(true);
    expect(placeMatches(place, "dev", "/", true)).toBe(true);
    expect(placeMatches(place, "dev", "/ap", true)).toBe(false);
  });
});

describe("placesOf", () => {
  const frame = (eventType: string, payload: unknown) =>
    JSON.stringify({ type: "secret-manager", data: { eventType, payload } });

  it("reads the places of secret events (a list) and of an import mutation (one folder)", () => {
    const update = frame("secret:update", [{ environment: "dev", secretPath: "/app", secretKey: "A" }]);
    expect(placesOf(update)).toEqual([{ environment: "dev", secretPath: "/app", secretKey: "A" }]);
    const mutation = frame("secret:import-mutation", { environment: "dev", secretPath: "/importer" });
    expect(placesOf(mutation)).toEqual([{ environment: "dev", secretPath: "/importer", secretKey: undefined }]);
  });

  it("reads nothing from a frame that is not one", () => {
    expect(placesOf("not json")).toEqual([]);
    expect(placesOf(frame("secret:update", "x"))).toEqual([]);
    expect(placesOf(frame("secret:update", [{ environment: 1 }]))).toEqual([]);
  });
});
