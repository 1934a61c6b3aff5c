import type { AppDeps } from "../../../context";
import type { UsableConnection } from "../../app-connections/app-connection.service";

/** A secret found at the destination: its full name there, and its value when the destination shows values. */
export type FoundSecret = { name: string; value: string | undefined };

/**
 * One run's handle on a destination, in destination names (a Parameter Store name includes the
 * path, GitHub's are upper-case). Errors are thrown as they come; the engine reports them.
 */
export type DestinationSession = {
  /**
   * Every secret in the destination's place the sync could touch (for Secrets Manager, the region's),
   * with its value for the names `valueOf` picks, where the destination shows values: only the names
   * a run may write or owns are read back (that finds drift), never a stranger's value, and a run made
   * due by a change reads none (it compares with what it recorded).
   */
  list: (valueOf: (name: string) => boolean) => Promise<Map<string, FoundSecret>>;
  /** Writes a value; `exists` says whether the destination had the name when listed. */
  write: (name: string, value: string, exists: boolean) => Promise<void>;
  remove: (name: string) => Promise<void>;
};

/** What the engine asks of each kind of destination. */
export type DestinationDriver = {
  /** The destination name of a folder key, after the key schema; undefined when the destination cannot hold it. */
  nameOf: (config: Record<string, unknown>, schemaKey: string) => string | undefined;
  /** The folder key part of a destination name (the inverse of nameOf before the key schema). */
  keyOf: (config: Record<string, unknown>, name: string) => string;
  /** Whether an empty value is written (GitHub) or left out (AWS cannot store one). */
  writesEmpty: boolean;
  /** Whether values can be read back (drift and no-op writes are decided on them). */
  readsValues: boolean;
  /**
   * The folder's values as the destination stores them: one secret per key, or (Secrets Manager's
   * many-to-one) one secret holding them all.
   */
  shape: (config: Record<string, unknown>, values: Map<string, string>) => Map<string, string>;
  /** The place, canonically, for ownership: two configs naming the same place give the same ref. */
  refOf: (deps: AppDeps, connection: UsableConnection, config: Record<string, unknown>) => Promise<string>;
  /** One run's use of the destination: `work` gets the session, which ends (connections closed) when it settles. */
  use: <T>(
    deps: AppDeps,
    connection: UsableConnection,
    config: Record<string, unknown>,
    options: Record<string, unknown>,
    work: (session: DestinationSession) => Promise<T>,
  ) => Promise<T>;
};
