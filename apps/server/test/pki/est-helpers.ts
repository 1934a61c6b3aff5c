import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app/create-app";
import { afterAll, beforeAll } from "vitest";
import { getTestApp, type TestApp } from "../helpers/app";
import { createTenant, expectOk } from "../helpers/tenant";
import { createEnrolmentProfile, ensureOpenssl } from "./pki-helpers";

export const workDir = () => mkdtempSync(join(tmpdir(), "keyward-est-"));

/** A command run asynchronously (the app answering it lives in this process). */
export const run = (file: string, args: string[], cwd: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
  });

/** An EC key and a base64 DER PKCS#10 request for it, written by openssl into `dir`. */
export const makeEstCsr = (dir: string, name: string, subject: string, san?: string) => {
  execFileSync(
    "/usr/bin/openssl",
    [
      "req",
      "-new",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      `${name}.key`,
      "-subj",
      subject,
      ...(san ? ["-addext", `subjectAltName=${san}`] : []),
      "-outform",
      "DER",
      "-out",
      `${name}.der`,
    ],
    { cwd: dir, stdio: "ignore" },
  );
  writeFileSync(join(dir, `${name}.b64`), `${readFileSync(join(dir, `${name}.der`)).toString("base64")}\n`);
  return { csrFile: `${name}.b64`, keyFile: `${name}.key` };
};

/**
 * curl against an EST path. Returns the HTTP status, and for a 200 the certificates of the base64
 * PKCS#7 answer as PEM, read back by openssl.
 */
export const estCall = async (
  dir: string,
  url: string,
  options: {
    csrFile?: string;
    user?: string;
    cert?: string;
    key?: string;
    contentType?: string;
    headers?: string[];
  } = {},
) => {
  const args = ["-s", "-k", "-o", "answer.b64", "-D", "headers.txt", "-w", "%{http_code}"];
  for (const header of options.headers ?? []) args.push("-H", header);
  if (options.user) args.push("-u", options.user);
  if (options.cert) args.push("--cert", options.cert, "--key", options.key!);
  if (options.csrFile) {
    args.push(
      "-H",
      `Content-Type: ${options.contentType ?? "application/pkcs10"}`,
      "--data-binary",
      `@${options.csrFile}`,
    );
  }
  const curl = await run("/usr/bin/curl", [...args, url], dir);
  const status = Number(curl.stdout.trim());
  const headers = readFileSync(join(dir, "headers.txt"), "utf8");
  const body = readFileSync(join(dir, "answer.b64"), "utf8");
  if (status !== 200) return { status, headers, body, pems: [] as string[] };
  writeFileSync(join(dir, "answer.der"), Buffer.from(body, "base64"));
  const printed = execFileSync("/usr/bin/openssl", ["pkcs7", "-inform", "DER", "-in", "answer.der", "-print_certs"], {
    cwd: dir,
    encoding: "utf8",
  });
  const pems = printed.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return { status, headers, body, pems };
};

/** The app served over TLS, asking for (not requiring) a client certificate, as an EST server does. */
export const startTlsApp = async (app: TestApp) => {
  const dir = workDir();
  execFileSync(
    "/usr/bin/openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      "tls.key",
      "-out",
      "tls.pem",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
    ],
    { cwd: dir, stdio: "ignore" },
  );
  const server: Server = createServer(
    {
      key: readFileSync(join(dir, "tls.key")),
      cert: readFileSync(join(dir, "tls.pem")),
      requestCert: true,
      rejectUnauthorized: false,
    },
    createApp(app.deps),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

/** A self-signed bootstrap CA and a device certificate it signed, made by openssl in `dir`. */
export const makeBootstrapIdentity = (dir: string) => {
  const ossl = (args: string[]) => execFileSync("/usr/bin/openssl", args, { cwd: dir, stdio: "ignore" });
  ossl([
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    "boot-ca.key",
    "-out",
    "boot-ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=Factory CA",
  ]);
  ossl([
    "req",
    "-new",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    "idevid.key",
    "-out",
    "idevid.csr",
    "-subj",
    "/CN=device-serial-42",
  ]);
  ossl([
    "x509",
    "-req",
    "-in",
    "idevid.csr",
    "-CA",
    "boot-ca.pem",
    "-CAkey",
    "boot-ca.key",
    "-CAcreateserial",
    "-out",
    "idevid.pem",
    "-days",
    "1",
  ]);
  return { caPem: readFileSync(join(dir, "boot-ca.pem"), "utf8"), cert: "idevid.pem", key: "idevid.key" };
};

/**
 * An EST suite: the shared app behind a TLS front for the whole file, and `estProfile`, an EST
 * profile (in a fresh tenant, cert-manager project and root CA) with its enrolment URL on that front.
 */
export const estSuite = () => {
  let tls: Awaited<ReturnType<typeof startTlsApp>> | undefined;
  beforeAll(async () => {
    ensureOpenssl();
    tls = await startTlsApp(await getTestApp());
  });
  afterAll(async () => {
    await tls?.close();
  });
  const baseUrl = () => tls!.baseUrl;
  const estProfile = async (estConfig: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const tenant = await createTenant();
    const { project, ca, profile } = await createEnrolmentProfile(tenant, "est", { ...extra, estConfig });
    const caPem = expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: ca.id } }));
    return { tenant, project, profile, caPem, url: `${baseUrl()}/.well-known/est/${profile.id}` };
  };
  return { estProfile, baseUrl };
};
