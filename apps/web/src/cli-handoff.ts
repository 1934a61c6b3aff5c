/**
 * The pages that hand a command line a session: `/login/cli` (`keyward login`), and the sign-in
 * page `/login` when it names a loopback listener's port (`/login?callback_port=…`, the address
 * Infisical-compatible command lines open). The sign-in done there keeps the port, and the console
 * delivers the session to that listener instead of opening the start page.
 */
export const isCliHandoff = (pathname: string, search: URLSearchParams) =>
  pathname === "/login/cli" || (pathname === "/login" && search.has("callback_port"));
