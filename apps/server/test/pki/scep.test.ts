import { describe, expect, it } from "vitest";
import { getTestApp } from "../helpers/app";
import { createTenant, expectOk } from "../helpers/tenant";
import { createEnrolmentProfile } from "./pki-helpers";
import { ensureCertmonger, requestState, withCertmonger } from "./scep-helpers";

describe("SCEP (RFC 8894) with certmonger", () => {
  it("enrols with a static challenge", async () => {
    ensureCertmonger();
    const app = await getTestApp();
    const tenant = await createTenant();
    const { profile } = await createEnrolmentProfile(tenant, "scep" as never, {
      scepConfig: { challengeType: "static", challengePassword: "static-secret" },
    });
    const url = `${app.baseUrl}${new URL(profile.scepConfig!.scepEndpointUrl, "http://x").pathname}`;
    const out = await withCertmonger((home) => `
getcert add-scep-ca -s -c kw -u '${url}' -v
sleep 2
getcert list-cas -s -c kw
getcert request -s -c kw -I first -f ${home}/out/first.pem -k ${home}/out/first.key -N CN=device-1 -D device-1.example.com -L static-secret -w -v
getcert list -s
ls -R ${home}
`);
    console.log(out.stdout, out.stderr);
    expect(expectOk).toBeDefined();
  }, 120_000);
});
