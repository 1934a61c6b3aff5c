export * from "./types";
export * from "./ability";
export * from "./conditions";
export * from "./glob";
export * from "./glob-subset";
export * from "./condition-subset";
export * from "./boundary";
export * from "./built-in-roles";
