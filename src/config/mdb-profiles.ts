/**
 * VMC profiles (docs/decisions/mdb-adapter.md, docs/decisions/real-vending-machines.md item 4): one preset per family
 * of vending machine
 * controllers, so that a technician picks the machine's kind instead of tuning six keys by hand.
 *
 * A profile only supplies defaults. Every key a site sets explicitly in `mdb` wins over the
 * profile (precedence: site key > profile > built-in), so configurations written before profiles
 * existed (`mdb.alwaysIdle`, `mdb.virtualCredit`, ...) behave exactly as they did.
 */

export const PROFILE_NAMES = [
  'level3-always-idle',
  'level3-session',
  'level2-session',
  'level2-multivend',
  'level1-session',
] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

export interface ProfileSettings {
  /** The MDB level the family speaks (informative: the VMC and the board negotiate it at SETUP). */
  level: 1 | 2 | 3;
  /** mdb-always-idle on the board; vend requests without a session start a Dynamic QR payment. */
  alwaysIdle: boolean;
  /** A session on this credit is kept open so the consumer can select (major units); null = off. */
  virtualCredit: number | null;
  /** Close and reopen an idle virtual session this often, before the VMC drops it; null = never. */
  sessionRefreshMs: number | null;
  /** Several vends in one virtual session; off = the session ends after each vend. */
  multiVend: boolean;
  maxResponseTimeS: number;
  vendResultTimeoutMs: number;
  sessionIdleTimeoutMs: number;
  /** mdb-cashsale-enabled on the board: ask the VMC to report sales paid by other devices. */
  cashSale: boolean;
}

/**
 * Level 1 and 2 VMCs have no always-idle: the reader must open a session itself. Many of them drop a
 * session nobody used after a while (a "session timeout" in the machine's menu, often 30 to 120 s),
 * so the session is refreshed well inside the shortest common value. The default preset keeps what
 * qrvend did before profiles (a virtual session, when a site sets one, stays open across vends). `virtualCredit: null`
 * in a
 * session preset means the site must set the credit (it depends on the currency and the prices).
 */
export const PROFILES: Readonly<Record<ProfileName, ProfileSettings>> = {
  'level3-always-idle': {
    level: 3,
    alwaysIdle: true,
    virtualCredit: null,
    sessionRefreshMs: null,
    multiVend: true,
    maxResponseTimeS: 60,
    vendResultTimeoutMs: 60_000,
    sessionIdleTimeoutMs: 60_000,
    cashSale: false,
  },
  'level3-session': {
    level: 3,
    alwaysIdle: false,
    virtualCredit: null,
    sessionRefreshMs: 25_000,
    multiVend: false,
    maxResponseTimeS: 60,
    vendResultTimeoutMs: 60_000,
    sessionIdleTimeoutMs: 60_000,
    cashSale: false,
  },
  'level2-session': {
    level: 2,
    alwaysIdle: false,
    virtualCredit: null,
    sessionRefreshMs: 25_000,
    multiVend: false,
    maxResponseTimeS: 60,
    vendResultTimeoutMs: 60_000,
    sessionIdleTimeoutMs: 30_000,
    cashSale: false,
  },
  'level2-multivend': {
    level: 2,
    alwaysIdle: false,
    virtualCredit: null,
    sessionRefreshMs: 25_000,
    multiVend: true,
    maxResponseTimeS: 60,
    vendResultTimeoutMs: 60_000,
    sessionIdleTimeoutMs: 30_000,
    cashSale: false,
  },
  'level1-session': {
    level: 1,
    alwaysIdle: false,
    virtualCredit: null,
    sessionRefreshMs: 20_000,
    multiVend: false,
    maxResponseTimeS: 60,
    vendResultTimeoutMs: 60_000,
    sessionIdleTimeoutMs: 30_000,
    cashSale: false,
  },
};

/** What a site may write in `mdb` to override its profile (every key optional). */
export type ProfileOverrides = Partial<Omit<ProfileSettings, 'level'>>;

export type ResolvedSettings = Omit<ProfileSettings, 'level'>;

/** The settings in force: the profile's values under the site's explicit keys. */
export function resolveProfile(name: ProfileName, site: ProfileOverrides): ResolvedSettings {
  const { level: _level, ...base } = PROFILES[name];
  const out = { ...base };
  for (const [k, v] of Object.entries(site)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/** The keys whose value in force differs from the profile's (for doctor and the logs). */
export function overridesOf(name: ProfileName, settings: ResolvedSettings): string[] {
  const { level: _level, ...base } = PROFILES[name];
  return (Object.keys(base) as (keyof ResolvedSettings)[]).filter((k) => settings[k] !== base[k]).sort();
}
