export * from "./types";
export * from "./ability";
export * from "./conditions";
export * from "./glob";
export * from "./built-in-roles";
