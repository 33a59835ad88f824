import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";

export const organizations = sqliteTable("organizations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  slug: text("slug").notNull().unique(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull().default(""),
});

export const environments = sqliteTable(
  "environments",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** Unique in the organization; `X-Hookrelay-Env` and the CLI's `--env` may name an environment by it. */
    slug: text("slug").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("environments_org_name").on(t.orgId, t.name), uniqueIndex("environments_org_slug").on(t.orgId, t.slug)],
);

/**
 * A person. `org_id`/`env_id` are where their session acts unless a request
 * names another (the last used); what they may do in an organization is their
 * membership's role (docs/decisions.md D21).
 */
export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  /** "" for none (an invited user, or one who signs in only through single sign-on): no password verifies against it. */
  passwordHash: text("password_hash").notNull(),
  name: text("name"),
  orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  envId: text("env_id").notNull().references(() => environments.id, { onDelete: "cascade" }),
  /** 1 for the instance's owner (the admin created on first start): whole-instance operations are theirs. */
  instanceOwner: integer("instance_owner").notNull().default(0),
  lastLoginAt: text("last_login_at"),
  createdAt: text("created_at").notNull(),
  /** Set by `hookrelay users unlock` (local mode): every node forgets the account's failed logins when it sees a new value. */
  loginUnlockedAt: text("login_unlocked_at"),
});

/** The session id is the SHA-256 of the cookie token: a stolen database yields no usable cookie. */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    /** `password` or `oidc`: how the session was opened. */
    method: text("method").notNull().default("password"),
    ip: text("ip"),
    userAgent: text("user_agent"),
    lastUsedAt: text("last_used_at"),
  },
  (t) => [index("sessions_user").on(t.userId)],
);

/**
 * A user's place in an organization: role `owner`, `admin`, `developer` or
 * `viewer`; status `invited` (no password set yet), `active` or `disabled`.
 * `env_id` is the environment last used there, so switching back returns to it.
 */
export const memberships = sqliteTable(
  "memberships",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    role: text("role").notNull(),
    status: text("status").notNull(),
    envId: text("env_id").references(() => environments.id, { onDelete: "set null" }),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("memberships_org_user").on(t.orgId, t.userId), index("memberships_user").on(t.userId)],
);

/**
 * A one-time link (`invite` or `password_reset`): only the SHA-256 of its
 * token is stored; `used_at` is set when it is spent, so it works once.
 */
export const accountLinks = sqliteTable(
  "account_links",
  {
    id: text("id").primaryKey(),
    kind: text("kind").notNull(),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    orgId: text("org_id").references(() => organizations.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull().unique(),
    createdBy: text("created_by"),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
  },
  (t) => [index("account_links_user").on(t.userId)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    envId: text("env_id").notNull().references(() => environments.id, { onDelete: "cascade" }),
    userId: text("user_id").references(() => users.id, { onDelete: "set null" }),
    name: text("name").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    keyPrefix: text("key_prefix").notNull(),
    scopes: text("scopes"),
    requestCount: integer("request_count").notNull().default(0),
    revoked: integer("revoked").notNull().default(0),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [index("api_keys_scope").on(t.orgId, t.envId)],
);
