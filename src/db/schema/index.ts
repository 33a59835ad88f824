export * from "./tenancy";
export * from "./sources";
export * from "./events";
export * from "./delivery";
export * from "./catalog";
export * from "./alerts";
export * from "./outbound";
export * from "./cluster";
