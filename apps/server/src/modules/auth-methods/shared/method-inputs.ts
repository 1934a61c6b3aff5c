/** The common fields as the contracts deliver them (defaults filled on attach, optional on update). */
export type CommonAttachInput = {
  accessTokenTTL: number;
  accessTokenMaxTTL: number;
  accessTokenNumUsesLimit: number;
  accessTokenTrustedIps: { ipAddress: string }[];
  accessTokenPeriod: number;
};

export type CommonUpdateInput = Partial<CommonAttachInput>;

export type LockoutInput = {
  lockoutEnabled: boolean;
  lockoutThreshold: number;
  lockoutDurationSeconds: number;
  lockoutCounterResetSeconds: number;
};

export const toLockoutColumns = (input: Partial<LockoutInput>) => ({
  lockout_enabled: input.lockoutEnabled,
  lockout_threshold: input.lockoutThreshold,
  lockout_duration_seconds: input.lockoutDurationSeconds,
  lockout_counter_reset_seconds: input.lockoutCounterResetSeconds,
});

export const toLockoutDto = (row: {
  lockout_enabled: boolean;
  lockout_threshold: number;
  lockout_duration_seconds: number;
  lockout_counter_reset_seconds: number;
}) => ({
  lockoutEnabled: row.lockout_enabled,
  lockoutThreshold: row.lockout_threshold,
  lockoutDurationSeconds: row.lockout_duration_seconds,
  lockoutCounterResetSeconds: row.lockout_counter_reset_seconds,
});
