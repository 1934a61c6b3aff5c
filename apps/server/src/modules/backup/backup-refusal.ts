/** A backup or restore that stops on purpose: its message is the one line the command prints. */
export class BackupRefusal extends Error {}
