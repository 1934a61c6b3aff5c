/** The OCSP routes sit beside the CA's CRL route, under this prefix. */
export const OCSP_MOUNT = "/api/v1/cert-manager/ca/internal";

/** The path of a CA's OCSP responder: POST the DER request here, or GET it base64 after a slash. */
export const ocspPathOf = (caId: string) => `${OCSP_MOUNT}/${caId}/ocsp`;

/**
 * The responder URL certificates of a CA carry in their Authority Information Access extension.
 * Only with PUBLIC_URL: a certificate outlives any request, so it never names the host one arrived at.
 */
export const ocspUrlOf = (env: { PUBLIC_URL?: string }, caId: string) =>
  env.PUBLIC_URL ? `${env.PUBLIC_URL}${ocspPathOf(caId)}` : undefined;
