import { z } from "zod";
import { stringEquals } from "./compare";
import { fail, OK, type Scheme } from "./types";

/** A shared secret sent as is in a header (GitLab's X-Gitlab-Token), compared in constant time. */
export const tokenConfig = z.object({});

export const token: Scheme<z.infer<typeof tokenConfig>> = {
  type: "token",
  defaultHeader: null,
  config: tokenConfig,
  secretProblem: (secret) => (secret.length === 0 ? "must not be empty" : null),
  settingsProblem: (header) => (header ? null : "verification_header is required for token verification (or pick a template)"),
  prepare(secret, header) {
    const headerName = (header ?? "").toLowerCase();
    return (req) => {
      const presented = req.headers[headerName];
      if (presented === undefined) return fail(`missing header ${header}`);
      return stringEquals(presented, secret) ? OK : fail("token does not match");
    };
  },
};
