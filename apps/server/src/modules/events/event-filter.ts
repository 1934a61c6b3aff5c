import type { EventRegistration, SecretEventType } from "@keyward/contract";
import type { Ability } from "../../permissions";
import { canDescribe, mayDescribeSomeIn, secretObject } from "../secrets/secret-access";
import type { EventRow } from "./secret-events.repository";

/** The `secret-events` action a registration of each event type needs. */
const SUBSCRIBE_ACTIONS: Record<SecretEventType, string> = {
  "secret:create": "subscribe-on-created",
  "secret:update": "subscribe-on-updated",
  "secret:delete": "subscribe-on-deleted",
  "secret:import-mutation": "subscribe-on-import-mutations",
};

/** What a registration is checked against: its environment ("" when none) and path. */
const registrationObject = (registration: EventRegistration) => ({
  environment: registration.conditions?.environmentSlug ?? "",
  secretPath: registration.conditions?.secretPath ?? "/",
});

/** The registration a subscription without `register` stands for: every event of the whole project. */
export const WHOLE_PROJECT: EventRegistration = { event: undefined, conditions: undefined };

/**
 * The `secret-events` action a registration lacks, or undefined when the caller may make it. One
 * naming an event type needs that type's action where it listens. One naming none stands for every
 * type the caller may subscribe to, so it needs some type's action: where it listens, or, with no
 * conditions (the whole project), anywhere in the project. Each event is checked again where it happened.
 */
export const missingSubscribeAction = (ability: Ability, registration: EventRegistration) => {
  if (registration.event !== undefined) {
    const action = SUBSCRIBE_ACTIONS[registration.event];
    return ability.can(action, "secret-events", registrationObject(registration)) ? undefined : action;
  }
  const place = registration.conditions === undefined ? undefined : registrationObject(registration);
  const actions = Object.values(SUBSCRIBE_ACTIONS);
  return actions.some((action) => ability.can(action, "secret-events", place)) ? undefined : actions[0];
};

/** A folder path is within a registered one when it is that folder or below it (whole segments). */
export const isWithin = (path: string, registered: string) =>
  registered === "/" || path === registered || path.startsWith(`${registered}/`);

const matches = (registration: EventRegistration, row: EventRow) =>
  (registration.event === undefined || registration.event === row.event_type) &&
  (registration.conditions === undefined ||
    (registration.conditions.environmentSlug === row.environment &&
      isWithin(row.secret_path, registration.conditions.secretPath)));

/**
 * The data of an event as this subscriber may see it, or undefined when it may see nothing of it:
 * a registration must match it, the subscriber must still hold the subscribe right where it
 * happened, and each secret is shown only to one that may describe it (its name, folder and tags).
 * Both spellings of the reference's fields are sent (`type`/`projectType`, `secretKeys`/`secretKey`).
 */
export const visibleEventData = (
  registrations: readonly EventRegistration[],
  ability: Ability,
  row: EventRow,
): string | undefined => {
  if (!registrations.some((r) => matches(r, row))) return undefined;
  const place = { environment: row.environment, secretPath: row.secret_path };
  if (!ability.can(SUBSCRIBE_ACTIONS[row.event_type as SecretEventType], "secret-events", place)) return undefined;
  let payload: unknown;
  if (row.event_type === "secret:import-mutation") {
    if (!mayDescribeSomeIn(ability, place)) return undefined;
    payload = place;
  } else {
    const shown = row.secrets.filter((s) =>
      canDescribe(ability, secretObject(row.environment, row.secret_path, s.key, s.tags)),
    );
    if (shown.length === 0) return undefined;
    payload = shown.map((s) => ({ ...place, secretKeys: s.key, secretKey: s.key }));
  }
  return JSON.stringify({
    type: "secret-manager",
    projectType: "secret-manager",
    data: { eventType: row.event_type, payload },
  });
};
