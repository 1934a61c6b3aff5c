import { UnauthorizedError } from "../errors";

/** `Bearer` (any case), then one token: no scheme, another scheme or a second token is not a credential. */
const BEARER = /^bearer[ \t]+([^\s]+)[ \t]*$/i;

/** The token of an `Authorization: Bearer <token>` header; 401 for anything else. */
export const bearerToken = (authorization: string | undefined): string => {
  if (!authorization) throw new UnauthorizedError("Token missing");
  const token = BEARER.exec(authorization)?.[1];
  if (!token) throw new UnauthorizedError("The Authorization header must be 'Bearer <token>'");
  return token;
};
