import type { ChangeRequest } from "@keyward/contract";
import { Link } from "../router";

/** Where a change request of a project is shown in the console. */
export const changeRequestHref = (projectId: string, requestId: string) =>
  `/projects/${encodeURIComponent(projectId)}/change-requests?request=${encodeURIComponent(requestId)}`;

/** A write into a protected folder opened a change request: say plainly that nothing was written. */
export const ChangeRequestOpened = ({ request, onDismiss }: { request: ChangeRequest; onDismiss: () => void }) => (
  <div className="banner banner-info row" role="status">
    <span>
      Change request opened — nothing was written yet. Folder <code>{request.secretPath}</code> of{" "}
      <code>{request.environment}</code> is protected: the change is applied once it is approved and merged.
    </span>
    <Link href={changeRequestHref(request.projectId, request.id)}>Open the change request</Link>
    <button type="button" className="linklike" onClick={onDismiss}>
      Dismiss
    </button>
  </div>
);
