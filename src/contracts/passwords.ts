/** Shorter passwords are refused: a password guards every secret the relay holds. Its own file, free of zod, so the UI bundle can import it. */
export const MIN_PASSWORD_LENGTH = 12;
