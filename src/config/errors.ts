/** A configuration that cannot run: serve prints its one-line message and exits. */
export class ConfigError extends Error {}
