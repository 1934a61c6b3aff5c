import { createKeywardClient, type KeywardClient } from "@keyward/client";

/** The console talks to the server it was loaded from. */
export const apiClient = (token?: string): KeywardClient =>
  createKeywardClient({ baseUrl: window.location.origin, token, throwOnUnknownStatus: false });
