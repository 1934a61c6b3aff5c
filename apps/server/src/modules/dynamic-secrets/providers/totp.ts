import { createHmac } from "node:crypto";
import type { z } from "zod";
import type { TotpInputsSchema } from "@keyward/contract";
import { BadRequestError } from "../../../errors";
import type { Provider } from "./types";

export type TotpInputs = z.infer<typeof TotpInputsSchema>;

type TotpParams = { secret: string; period: number; digits: number; algorithm: "sha1" | "sha256" | "sha512" };

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

const decodeBase32 = (value: string) => {
  let bits = 0;
  let buffer = 0;
  const out: number[] = [];
  for (const char of value.replace(/=+$/, "").toUpperCase()) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new BadRequestError("The TOTP secret must be base32");
    buffer = (buffer << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((buffer >> bits) & 0xff);
    }
  }
  return Buffer.from(out);
};

const paramsOf = (inputs: TotpInputs): TotpParams => {
  if (inputs.configType === "manual") {
    return {
      secret: inputs.secret,
      period: inputs.period ?? 30,
      digits: inputs.digits ?? 6,
      algorithm: inputs.algorithm ?? "sha1",
    };
  }
  const query = new URL(inputs.url).searchParams;
  const algorithm = (query.get("algorithm") ?? "sha1").toLowerCase();
  if (algorithm !== "sha1" && algorithm !== "sha256" && algorithm !== "sha512")
    throw new BadRequestError("Unsupported TOTP algorithm");
  const period = Number(query.get("period") ?? 30);
  const digits = Number(query.get("digits") ?? 6);
  if (!Number.isInteger(period) || period < 1 || period > 3600) throw new BadRequestError("Invalid TOTP period");
  if (!Number.isInteger(digits) || digits < 6 || digits > 10) throw new BadRequestError("Invalid TOTP digits");
  return { secret: query.get("secret") ?? "", period, digits, algorithm };
};

/** RFC 6238 code for the current time step. */
export const totpCode = (params: TotpParams, now = Date.now()) => {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(now / 1000 / params.period)));
  const mac = createHmac(params.algorithm, decodeBase32(params.secret)).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** params.digits;
  return String(binary).padStart(params.digits, "0");
};

/** A TOTP lease hands out the current code; nothing is created remotely, so revocation has nothing to undo. */
export const totpProvider: Provider<TotpInputs> = {
  maxUsernameLength: 255,
  secretsOf: (inputs) => [inputs.configType === "manual" ? inputs.secret : inputs.url],
  validate: (inputs) => {
    const params = paramsOf(inputs);
    decodeBase32(params.secret);
  },
  verifyConnection: async () => undefined,
  create: async (inputs) => {
    const params = paramsOf(inputs);
    const now = Date.now();
    const remaining = params.period - (Math.floor(now / 1000) % params.period);
    return { data: { TOTP: totpCode(params, now), TIME_REMAINING: String(remaining) } };
  },
  renew: async () => {
    throw new BadRequestError("Lease renewal is not supported for TOTPs");
  },
  revoke: async () => undefined,
  redact: (inputs) =>
    inputs.configType === "manual"
      ? { configType: inputs.configType, period: inputs.period, algorithm: inputs.algorithm, digits: inputs.digits }
      : { configType: inputs.configType },
};
