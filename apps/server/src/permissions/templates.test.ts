import { describe, expect, it } from "vitest";
import { buildAbility } from "./ability";
import { missingPermissions } from "./boundary";
import { renderRules, rulesUseAuthTemplates, rulesUseTemplates, type TemplateContext } from "./templates";
import type { Conditions, PermissionRule } from "./types";

const rule = (subject: string, action: string[], conditions?: Conditions, inverted = false): PermissionRule => ({
  subject,
  action,
  inverted,
  ...(conditions ? { conditions } : {}),
});

const context: TemplateContext = {
  identity: {
    id: "0b6f7a1e-1111-4222-8333-944445555666",
    username: "deployer",
    metadata: { team: "app-*", env: "dev" },
    auth: { oidc: { claims: { team: "platform" } } },
  },
};

describe("identity templates", () => {
  it("fills every operator, list item and nested $elemMatch, and leaves rules without templates untouched", () => {
    const plain = rule("secrets", ["readValue"], { environment: "prod" });
    const [filled, same] = renderRules(
      [
        rule("secrets", ["readValue"], {
          environment: "{{ identity.metadata.env }}",
          secretName: { $in: ["{{identity.username}}-key", "fixed"], $ne: "{{identity.id}}" },
          secretTags: { $all: ["{{identity.auth.oidc.claims.team}}"] },
          metadata: { $elemMatch: { key: "owner", value: "{{identity.username}}" } },
        }),
        plain,
      ],
      context,
    );
    expect(filled!.conditions).toEqual({
      environment: "dev",
      secretName: { $in: ["deployer-key", "fixed"], $ne: context.identity.id },
      secretTags: { $all: ["platform"] },
      metadata: { $elemMatch: { key: "owner", value: "deployer" } },
    });
    expect(same).toBe(plain);
  });

  it("matches a filled-in $glob value literally, and a missing variable as empty", () => {
    const [glob, missing] = renderRules(
      [
        rule("secrets", ["readValue"], { secretPath: { $glob: "/{{identity.metadata.team}}/**" } }),
        rule("secrets", ["edit"], {
          secretPath: { $glob: "/{{identity.metadata.absent}}/**" },
          environment: "{{identity.auth.ldap.claims.x}}",
        }),
      ],
      context,
    );
    expect(glob!.conditions).toEqual({ secretPath: { $glob: "/app-\\*/**" } });
    expect(missing!.conditions).toEqual({ secretPath: { $glob: "//**" }, environment: "" });
    const ability = buildAbility([glob!]);
    expect(ability.can("readValue", "secrets", { secretPath: "/app-*/x" })).toBe(true);
    expect(ability.can("readValue", "secrets", { secretPath: "/app-a/x" })).toBe(false);
  });

  it("tells which rule sets need a template context, and which a per-token one", () => {
    expect(rulesUseTemplates([rule("secrets", ["read"], { environment: "dev" })])).toBe(false);
    expect(rulesUseTemplates([rule("secrets", ["read"], { environment: "{{identity.metadata.env}}" })])).toBe(true);
    expect(rulesUseAuthTemplates([rule("secrets", ["read"], { environment: "{{identity.metadata.env}}" })])).toBe(
      false,
    );
    expect(
      rulesUseAuthTemplates([rule("secrets", ["read"], { environment: "{{ identity.auth.oidc.claims.env }}" })]),
    ).toBe(true);
  });

  it("treats a templated condition as unknown in the boundary check", () => {
    const templated = rule("secrets", ["readValue"], {
      environment: "dev",
      secretPath: { $glob: "/{{identity.metadata.team}}/**" },
    });
    // Only a holder unconstrained on the field covers every value the template may take.
    expect(
      missingPermissions(buildAbility([rule("secrets", ["readValue"], { environment: "dev" })]), [templated]),
    ).toEqual([]);
    expect(
      missingPermissions(
        buildAbility([rule("secrets", ["readValue"], { environment: "dev", secretPath: { $glob: "/**" } })]),
        [templated],
      ),
    ).toHaveLength(1);
    expect(
      missingPermissions(buildAbility([rule("secrets", ["readValue"], { secretPath: "{{identity.metadata.team}}" })]), [
        rule("secrets", ["readValue"], { secretPath: "{{identity.metadata.team}}" }),
      ]),
    ).toHaveLength(1);
    // A forbid the template could fill in to overlap still blocks the grant.
    const holder = buildAbility([
      rule("identity", ["read"]),
      rule("identity", ["read"], { identityId: "protected" }, true),
    ]);
    expect(missingPermissions(holder, [rule("identity", ["read"], { identityId: "{{identity.id}}" })])).toHaveLength(1);
    expect(missingPermissions(holder, [rule("identity", ["read"], { identityId: "someone" })])).toEqual([]);
  });
});
